/// Why a schema was refused when it was compiled.
public enum SchemaError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The schema is not valid, uses a keyword Roost does not support, refers to
    /// something outside itself, or nests too deep. `pointer` is the JSON Pointer
    /// (RFC 6901) of the offending place in the schema, "" for its root.
    case invalid(pointer: String, message: String)

    public var pointer: String {
        switch self { case .invalid(let pointer, _): return pointer }
    }

    public var message: String {
        switch self { case .invalid(_, let message): return message }
    }

    public var description: String {
        "schema at \"\(pointer)\": \(message)"
    }
}
