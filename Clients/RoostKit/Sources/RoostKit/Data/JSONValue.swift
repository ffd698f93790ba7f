import Foundation

/// A JSON value: what Roost stores, and what filters, patches and untyped
/// documents are made of.
///
/// Literals build it directly, so filters read like the JSON they become:
/// ```swift
/// let value: JSONValue = ["name": "Golden Gate Park", "categories": ["Park"]]
/// ```
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// The members when this is an object.
    public var objectValue: [String: JSONValue]? { if case .object(let o) = self { return o }; return nil }
    /// The string when this is a string.
    public var stringValue: String? { if case .string(let s) = self { return s }; return nil }
    /// The number when this is a number.
    public var doubleValue: Double? { if case .number(let d) = self { return d }; return nil }
    /// The elements when this is an array.
    public var arrayValue: [JSONValue]? { if case .array(let a) = self { return a }; return nil }

    /// The member named `key` of an object (nil otherwise).
    public subscript(key: String) -> JSONValue? {
        get { objectValue?[key] }
        set {
            guard case .object(var o) = self else { return }
            o[key] = newValue
            self = .object(o)
        }
    }

    /// Encodes any `Encodable` value into a JSON value.
    public init<T: Encodable>(encoding value: T) throws {
        let data = try JSONEncoder.roost.encode(value)
        self = try JSONDecoder().decode(JSONValue.self, from: data)
    }

    /// Decodes this value as `T`.
    public func decode<T: Decodable>(as type: T.Type = T.self) throws -> T {
        try JSONDecoder.roost.decode(T.self, from: try jsonData())
    }

    /// The compact JSON text of this value, keys sorted.
    public func jsonData() throws -> Data { try JSONEncoder.roost.encode(self) }

    /// The compact JSON text of this value, keys sorted.
    public var jsonText: String { (try? jsonData()).map { String(decoding: $0, as: UTF8.self) } ?? "null" }

    /// Parses JSON text.
    public static func parse(_ data: Data) throws -> JSONValue {
        try JSONDecoder().decode(JSONValue.self, from: data)
    }
}

extension JSONValue: Codable {
    public init(from decoder: Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() { self = .null }
        else if let b = try? c.decode(Bool.self) { self = .bool(b) }
        else if let d = try? c.decode(Double.self) { self = .number(d) }
        else if let s = try? c.decode(String.self) { self = .string(s) }
        else if let a = try? c.decode([JSONValue].self) { self = .array(a) }
        else { self = .object(try c.decode([String: JSONValue].self)) }
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.singleValueContainer()
        switch self {
        case .null: try c.encodeNil()
        case .bool(let b): try c.encode(b)
        case .number(let d):
            if d.rounded() == d, abs(d) < 9.0e15 { try c.encode(Int64(d)) } else { try c.encode(d) }
        case .string(let s): try c.encode(s)
        case .array(let a): try c.encode(a)
        case .object(let o): try c.encode(o)
        }
    }
}

extension JSONValue: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral {
    public init(nilLiteral: ()) { self = .null }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int) { self = .number(Double(value)) }
    public init(floatLiteral value: Double) { self = .number(value) }
    public init(stringLiteral value: String) { self = .string(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}

/// A Swift value that has a natural JSON form, for query operands.
public protocol JSONValueConvertible {
    /// This value as JSON.
    var jsonValue: JSONValue { get }
}

extension JSONValue: JSONValueConvertible { public var jsonValue: JSONValue { self } }
extension String: JSONValueConvertible { public var jsonValue: JSONValue { .string(self) } }
extension Int: JSONValueConvertible { public var jsonValue: JSONValue { .number(Double(self)) } }
extension Double: JSONValueConvertible { public var jsonValue: JSONValue { .number(self) } }
extension Bool: JSONValueConvertible { public var jsonValue: JSONValue { .bool(self) } }
extension Date: JSONValueConvertible { public var jsonValue: JSONValue { .string(RoostDate.format(self)) } }

extension JSONEncoder {
    /// Roost's encoder: sorted keys, ISO 8601 dates with milliseconds.
    static var roost: JSONEncoder {
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        e.dateEncodingStrategy = .custom { date, encoder in
            var c = encoder.singleValueContainer()
            try c.encode(RoostDate.format(date))
        }
        return e
    }
}

extension JSONDecoder {
    /// Roost's decoder: ISO 8601 dates with or without milliseconds.
    static var roost: JSONDecoder {
        let d = JSONDecoder()
        d.dateDecodingStrategy = .custom { decoder in
            let c = try decoder.singleValueContainer()
            let text = try c.decode(String.self)
            guard let date = RoostDate.parse(text) else {
                throw DecodingError.dataCorruptedError(in: c, debugDescription: "not an ISO 8601 date: \(text)")
            }
            return date
        }
        return d
    }
}

/// Roost's timestamps: ISO 8601 UTC with milliseconds.
enum RoostDate {
    static func format(_ date: Date) -> String {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return f.string(from: date)
    }

    static func parse(_ text: String) -> Date? {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let d = f.date(from: text) { return d }
        f.formatOptions = [.withInternetDateTime]
        return f.date(from: text)
    }
}
