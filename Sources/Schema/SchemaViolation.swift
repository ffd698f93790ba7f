/// One way an instance fails its schema.
///
/// The list `JSONSchema.validate` returns is in document order of the instance
/// (a value's own violations before those of its members, members in the order
/// they are written; a missing property after the members that are there), so
/// the same document always gives the same list.
public struct SchemaViolation: Sendable, Hashable, CustomStringConvertible {
    /// JSON Pointer (RFC 6901) of the failing value in the instance, "" for the root.
    /// For `required` and `dependentRequired` it points at the missing property, and for
    /// `additionalProperties` at the property that is not allowed, so a client can show
    /// the message at that form field.
    public let instancePointer: String
    /// JSON Pointer of the failing keyword in the schema, where it is written
    /// (a keyword reached through `$ref` has the path inside the referenced definition).
    public let schemaPath: String
    /// The failing keyword, such as "type", "required" or "format".
    public let keyword: String
    /// An English sentence a developer can read, without the pointer.
    public let message: String

    public init(instancePointer: String, schemaPath: String, keyword: String, message: String) {
        self.instancePointer = instancePointer
        self.schemaPath = schemaPath
        self.keyword = keyword
        self.message = message
    }

    public var description: String {
        "\(instancePointer.isEmpty ? "(root)" : instancePointer): \(message) [\(schemaPath)]"
    }
}
