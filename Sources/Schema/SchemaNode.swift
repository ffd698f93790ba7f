import JSON

/// One compiled (sub)schema: a boolean schema, or the keywords to check in the
/// order they are written. Subschemas are indices into `CompiledSchema.nodes`,
/// so `$ref` cycles are plain numbers, not reference cycles.
final class SchemaNode: @unchecked Sendable {
    /// JSON Pointer of this schema in the schema document.
    let location: String
    /// The keyword that holds this schema ("properties", "$ref", …; "" for the root).
    let holder: String
    /// Set for `true` and `false`.
    var boolean: Bool?
    var keywords: [SchemaKeyword] = []

    init(location: String, holder: String) {
        self.location = location
        self.holder = holder
    }
}

/// A node as the evaluator reads it: constant, so it is read in place without
/// retaining a class or its arrays per value judged.
struct CompiledNode: Sendable {
    let location: String
    let holder: String
    let boolean: Bool?
    let keywords: [SchemaKeyword]

    init(_ node: SchemaNode) {
        location = node.location
        holder = node.holder
        boolean = node.boolean
        keywords = node.keywords
    }
}

/// One keyword (or group of keywords that work together) as written in its schema.
/// A class with constant members: the evaluator borrows `check` in place instead of
/// copying the enum and retaining its arguments for every value it judges.
final class SchemaKeyword: @unchecked Sendable {
    let check: SchemaCheck
    /// The keyword's name (for a group, the first of it that is written).
    let name: String

    init(check: SchemaCheck, name: String) {
        self.check = check
        self.name = name
    }
}

/// What a keyword checks, with its arguments already parsed.
enum SchemaCheck {
    case type(SchemaTypes)
    case enumeration(SchemaEnum)
    case constant(JSONValue)
    case bound(SchemaBound, JSONValue)
    case multipleOf(JSONValue)
    case minLength(Int), maxLength(Int)
    case pattern(SchemaPattern)
    case format(SchemaFormat)
    case minItems(Int), maxItems(Int)
    case uniqueItems
    /// `prefixItems` and `items` (the items after the prefix).
    case items(prefix: [Int], rest: Int?)
    case contains(Int, min: Int, max: Int?)
    /// `properties`, `patternProperties` and `additionalProperties`, which decide together.
    case members(SchemaMembers)
    case required([String])
    case minProperties(Int), maxProperties(Int)
    case propertyNames(Int)
    case dependentRequired([(property: String, requires: [String])])
    case dependentSchemas([(property: String, schema: Int)])
    case allOf([Int]), anyOf([Int]), oneOf([Int])
    case not(Int)
    case conditional(if: Int, then: Int?, else: Int?)
    case ref(Int)
}

/// The `type` keyword as a bit set.
struct SchemaTypes: OptionSet {
    let rawValue: UInt8
    static let null = SchemaTypes(rawValue: 1)
    static let boolean = SchemaTypes(rawValue: 2)
    static let object = SchemaTypes(rawValue: 4)
    static let array = SchemaTypes(rawValue: 8)
    static let number = SchemaTypes(rawValue: 16)
    static let string = SchemaTypes(rawValue: 32)
    static let integer = SchemaTypes(rawValue: 64)

    static let names: [(String, SchemaTypes)] = [
        ("null", .null), ("boolean", .boolean), ("object", .object), ("array", .array),
        ("number", .number), ("string", .string), ("integer", .integer),
    ]

    func admits(_ value: JSONValue) -> Bool {
        switch value {
        case .null: return contains(.null)
        case .bool: return contains(.boolean)
        case .object: return contains(.object)
        case .array: return contains(.array)
        case .string: return contains(.string)
        case .int, .double: return contains(.number) || (contains(.integer) && SchemaNumber.isInteger(value))
        }
    }

    var description: String {
        let list = Self.names.filter { contains($0.1) }.map { $0.0 == "integer" ? "an integer" : GeoPointFormat.article($0.0) }
        if list.count == 1 { return list[0] }
        return list.dropLast().joined(separator: ", ") + " or " + list.last!
    }
}

/// `enum`: a list, with a hash set beside it once it is long.
struct SchemaEnum {
    let values: [JSONValue]
    let set: Set<JSONEquivalence>?

    init(_ values: [JSONValue]) {
        self.values = values
        set = values.count > 8 ? Set(values.map(JSONEquivalence.init)) : nil
    }

    func contains(_ value: JSONValue) -> Bool {
        if let set { return set.contains(JSONEquivalence(value)) }
        return values.contains { JSONEquivalence.equal($0, value) }
    }
}

enum SchemaBound: String {
    case minimum, maximum, exclusiveMinimum, exclusiveMaximum
}

/// How an object's members are matched to subschemas.
struct SchemaMembers {
    var properties: [(name: String, schema: Int)] = []
    /// Index by name once there are many properties.
    var propertyIndex: [String: Int]?
    var patterns: [(pattern: SchemaPattern, schema: Int)] = []
    var additional: Int?

    func property(_ name: String) -> Int? {
        if let propertyIndex { return propertyIndex[name] }
        for p in properties where p.name == name { return p.schema }
        return nil
    }
}
