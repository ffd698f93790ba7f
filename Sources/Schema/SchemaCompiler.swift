import JSON

/// Compiles a schema document to `SchemaNode`s: every keyword's value parsed and
/// checked once, every `$ref` resolved to a node index. Work is a queue, not
/// recursion; then `SchemaGraph` refuses `$ref` cycles and over-deep chains.
struct SchemaCompiler {
    let root: JSONValue
    let index: SchemaIndex
    private(set) var nodes: [SchemaNode] = []
    private var nodeAt: [String: Int] = [:]
    private var queue: [(node: Int, value: JSONValue)] = []

    init(root: JSONValue, maxDepth: Int) throws(SchemaError) {
        self.root = root
        index = try SchemaIndex(root: root, maxDepth: maxDepth)
        _ = node(at: "", value: root, holder: "")
        while let (n, value) = queue.popLast() {
            try compile(nodes[n], value)
        }
    }

    /// The node for the schema at `pointer`, queued for compiling the first time.
    private mutating func node(at pointer: String, value: JSONValue, holder: String) -> Int {
        if let existing = nodeAt[pointer] { return existing }
        let n = nodes.count
        nodes.append(SchemaNode(location: pointer, holder: holder))
        nodeAt[pointer] = n
        queue.append((n, value))
        return n
    }

    private mutating func compile(_ node: SchemaNode, _ value: JSONValue) throws(SchemaError) {
        let here = node.location
        guard case .object(let object) = value else {
            guard case .bool(let b) = value else {
                throw .invalid(pointer: here, message: "a schema must be an object or a boolean")
            }
            node.boolean = b
            return
        }
        var done: Set<String> = []
        for (key, member) in object {
            let at = here + "/" + JSONPointer.escape(key)
            if let reason = SchemaVocabulary.refused[key] { throw .invalid(pointer: at, message: reason) }
            guard let kind = SchemaVocabulary.kind(of: key) else {
                throw .invalid(pointer: at, message: "unknown keyword \"\(key)\" (a typo? extensions start with \"x-\")")
            }
            if kind == .annotation || done.contains(key) { continue }
            if let check = try check(key, member, in: object, at: at, done: &done) {
                node.keywords.append(SchemaKeyword(check: check, name: key))
            }
        }
    }

    // MARK: - Keywords

    /// The check for one keyword, or nil when it only takes part in another's
    /// (`then` without `if`) or needs no check (`$defs`, `uniqueItems: false`).
    private mutating func check(_ key: String, _ v: JSONValue, in object: JSONObject, at: String,
                                done: inout Set<String>) throws(SchemaError) -> SchemaCheck? {
        let parent = String(at[..<at.lastIndex(of: "/")!])
        switch key {
        case "$schema":
            guard let s = v.stringValue, SchemaVocabulary.dialects.contains(s) else {
                throw .invalid(pointer: at, message: "only draft 2020-12 schemas are supported ($schema \"https://json-schema.org/draft/2020-12/schema\")")
            }
            return nil
        case "$id", "$anchor":
            guard v.stringValue != nil else { throw .invalid(pointer: at, message: "\(key) must be a string") }
            return nil
        case "$defs", "definitions":
            for (name, schema) in try map(v, at) { _ = node(at: at + "/" + JSONPointer.escape(name), value: schema, holder: key) }
            return nil
        case "$ref":
            guard let reference = v.stringValue else { throw .invalid(pointer: at, message: "$ref must be a string") }
            let base = index.bases[parent] ?? SchemaURI(parsing: SchemaIndex.defaultBase)
            let target = try index.target(of: reference, base: base, at: at)
            guard index.bases[target] != nil, let value = JSONPointer.value(at: target, in: root) else {
                throw .invalid(pointer: at, message: "$ref \"\(reference)\" does not point at a schema")
            }
            return .ref(node(at: target, value: value, holder: "$ref"))
        case "type":
            return .type(try types(v, at))
        case "enum":
            guard case .array(let values) = v else { throw .invalid(pointer: at, message: "enum must be an array") }
            return .enumeration(SchemaEnum(values))
        case "const":
            return .constant(v)
        case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum":
            guard v.isNumber else { throw .invalid(pointer: at, message: "\(key) must be a number") }
            return .bound(SchemaBound(rawValue: key)!, v)
        case "multipleOf":
            guard let d = v.doubleValue, d > 0, d.isFinite else { throw .invalid(pointer: at, message: "multipleOf must be a number greater than 0") }
            return .multipleOf(v)
        case "minLength": return .minLength(try count(v, at))
        case "maxLength": return .maxLength(try count(v, at))
        case "minItems": return .minItems(try count(v, at))
        case "maxItems": return .maxItems(try count(v, at))
        case "minProperties": return .minProperties(try count(v, at))
        case "maxProperties": return .maxProperties(try count(v, at))
        case "minContains", "maxContains":
            _ = try count(v, at)
            return nil
        case "uniqueItems":
            guard case .bool(let unique) = v else { throw .invalid(pointer: at, message: "uniqueItems must be true or false") }
            return unique ? .uniqueItems : nil
        case "pattern":
            return .pattern(try pattern(v, at))
        case "format", "x-roost-collection":
            done.insert("format")
            done.insert("x-roost-collection")
            return try format(object, parent)
        case "items", "prefixItems":
            done.insert("items")
            done.insert("prefixItems")
            var prefix: [Int] = []
            if let p = object["prefixItems"] {
                prefix = try list(p, parent + "/prefixItems").enumerated().map { i, s in node(at: parent + "/prefixItems/\(i)", value: s, holder: "prefixItems") }
            }
            var rest: Int?
            if let items = object["items"] {
                if case .array = items {
                    throw .invalid(pointer: parent + "/items", message: "items must be a schema; for a tuple use prefixItems (draft 2020-12)")
                }
                rest = node(at: parent + "/items", value: items, holder: "items")
            }
            return .items(prefix: prefix, rest: rest)
        case "contains":
            let min = try object["minContains"].map { (v) throws(SchemaError) in try count(v, parent + "/minContains") } ?? 1
            let max = try object["maxContains"].map { (v) throws(SchemaError) in try count(v, parent + "/maxContains") }
            return .contains(node(at: at, value: v, holder: key), min: min, max: max)
        case "properties", "patternProperties", "additionalProperties":
            done.insert("properties")
            done.insert("patternProperties")
            done.insert("additionalProperties")
            return .members(try members(object, parent))
        case "required":
            return .required(try names(v, at))
        case "propertyNames":
            return .propertyNames(node(at: at, value: v, holder: key))
        case "dependentRequired":
            return .dependentRequired(try map(v, at).map { (name, list) throws(SchemaError) in
                (name, try names(list, at + "/" + JSONPointer.escape(name)))
            })
        case "dependentSchemas":
            return .dependentSchemas(try map(v, at).map { name, s in (name, node(at: at + "/" + JSONPointer.escape(name), value: s, holder: key)) })
        case "allOf", "anyOf", "oneOf":
            let schemas = try list(v, at).enumerated().map { i, s in node(at: at + "/\(i)", value: s, holder: key) }
            return key == "allOf" ? .allOf(schemas) : key == "anyOf" ? .anyOf(schemas) : .oneOf(schemas)
        case "not":
            return .not(node(at: at, value: v, holder: key))
        case "if", "then", "else":
            done.insert("if")
            done.insert("then")
            done.insert("else")
            let branches = ["then", "else"].map { name in object[name].map { node(at: parent + "/" + name, value: $0, holder: name) } }
            guard let condition = object["if"] else { return nil }
            return .conditional(if: node(at: parent + "/if", value: condition, holder: "if"), then: branches[0], else: branches[1])
        default:
            return nil
        }
    }

    private mutating func members(_ object: JSONObject, _ parent: String) throws(SchemaError) -> SchemaMembers {
        var members = SchemaMembers()
        if let properties = object["properties"] {
            for (name, s) in try map(properties, parent + "/properties") {
                members.properties.append((name, node(at: parent + "/properties/" + JSONPointer.escape(name), value: s, holder: "properties")))
            }
            if members.properties.count > 16 {  // below that, comparing names beats hashing one
                members.propertyIndex = Dictionary(members.properties.map { ($0.name, $0.schema) }, uniquingKeysWith: { a, _ in a })
            }
        }
        if let patterns = object["patternProperties"] {
            for (source, s) in try map(patterns, parent + "/patternProperties") {
                let at = parent + "/patternProperties/" + JSONPointer.escape(source)
                members.patterns.append((try pattern(.string(source), at), node(at: at, value: s, holder: "patternProperties")))
            }
        }
        if let additional = object["additionalProperties"] {
            members.additional = node(at: parent + "/additionalProperties", value: additional, holder: "additionalProperties")
        }
        return members
    }

    private func format(_ object: JSONObject, _ parent: String) throws(SchemaError) -> SchemaCheck? {
        let collection = object["x-roost-collection"]
        guard let format = object["format"] else {
            throw .invalid(pointer: parent + "/x-roost-collection", message: "x-roost-collection goes with \"format\": \"reference\"")
        }
        guard let name = format.stringValue else { throw .invalid(pointer: parent + "/format", message: "format must be a string") }
        if name == "reference" {
            guard let c = collection?.stringValue, !c.isEmpty else {
                throw .invalid(pointer: parent, message: "\"format\": \"reference\" needs \"x-roost-collection\": the name of the referenced collection")
            }
        } else if collection != nil {
            throw .invalid(pointer: parent + "/x-roost-collection", message: "x-roost-collection goes with \"format\": \"reference\"")
        }
        guard let parsed = SchemaFormat(name: name, collection: collection?.stringValue) else {
            let known = (SchemaFormat.asserted + SchemaFormat.roostNames + SchemaFormat.ignoredNames).joined(separator: ", ")
            throw .invalid(pointer: parent + "/format", message: "unknown format \"\(name)\" (known: \(known))")
        }
        if case .ignored = parsed { return nil }
        return .format(parsed)
    }

    // MARK: - Values

    private func types(_ v: JSONValue, _ at: String) throws(SchemaError) -> SchemaTypes {
        func one(_ name: JSONValue) throws(SchemaError) -> SchemaTypes {
            guard let s = name.stringValue, let t = SchemaTypes.names.first(where: { $0.0 == s })?.1 else {
                throw .invalid(pointer: at, message: "type must be one of null, boolean, object, array, number, string, integer (or a list of them)")
            }
            return t
        }
        if case .array(let list) = v {
            guard !list.isEmpty else { throw .invalid(pointer: at, message: "type must not be an empty list") }
            var all: SchemaTypes = []
            for item in list {
                let t = try one(item)
                guard !all.contains(t) else { throw .invalid(pointer: at, message: "type lists a type twice") }
                all.insert(t)
            }
            return all
        }
        return try one(v)
    }

    /// A non-negative integer (2.0 counts).
    private func count(_ v: JSONValue, _ at: String) throws(SchemaError) -> Int {
        guard SchemaNumber.isInteger(v), let d = v.doubleValue, d >= 0 else {
            throw .invalid(pointer: at, message: "must be a non-negative integer")
        }
        return d >= 9.0e18 ? Int.max : Int(d)
    }

    private func names(_ v: JSONValue, _ at: String) throws(SchemaError) -> [String] {
        guard case .array(let list) = v else { throw .invalid(pointer: at, message: "must be an array of strings") }
        var seen = Set<String>()
        return try list.map { (item) throws(SchemaError) in
            guard let s = item.stringValue, seen.insert(s).inserted else {
                throw .invalid(pointer: at, message: "must be an array of distinct strings")
            }
            return s
        }
    }

    private func list(_ v: JSONValue, _ at: String) throws(SchemaError) -> [JSONValue] {
        guard case .array(let list) = v, !list.isEmpty else { throw .invalid(pointer: at, message: "must be a non-empty array of schemas") }
        return list
    }

    private func map(_ v: JSONValue, _ at: String) throws(SchemaError) -> JSONObject {
        guard case .object(let object) = v else { throw .invalid(pointer: at, message: "must be an object") }
        return object
    }

    private func pattern(_ v: JSONValue, _ at: String) throws(SchemaError) -> SchemaPattern {
        guard let source = v.stringValue else { throw .invalid(pointer: at, message: "pattern must be a string") }
        switch SchemaPattern.compile(source) {
        case .success(let p): return p
        case .failure(let e): throw .invalid(pointer: at, message: "the regular expression \"\(source)\" \(e.message)")
        }
    }
}
