import JSON

/// One run of a compiled schema over an instance. In collecting mode every
/// violation is recorded; otherwise (inside `anyOf`, `not`, `if`, …) the first
/// failure ends the branch. Nothing is allocated on the way unless something fails
/// or a reference is found, apart from the instance-path stack.
struct SchemaEvaluator {
    let nodes: [CompiledNode]
    /// Where in the instance we are.
    private var path: [Step] = []
    private var found: [Found] = []
    /// Set when the caller wants `format: reference` values.
    var references: [(pointer: String, collection: String)]?
    private var depth = 0

    /// Nested schema evaluations allowed before validation gives up with a violation.
    static let maxEvaluationDepth = 256

    /// Whether `path` is kept: needed to record violations and references, not to
    /// decide validity (the fast first pass over a valid document skips it).
    private let tracksPath: Bool

    init(nodes: [CompiledNode], collectReferences: Bool, tracksPath: Bool = true) {
        self.nodes = nodes
        references = collectReferences ? [] : nil
        self.tracksPath = tracksPath || collectReferences
        if self.tracksPath { path.reserveCapacity(16) }
    }

    /// A step into the instance: a member's key, or an array index (`key` nil).
    /// `order` sorts violations in document order.
    private struct Step {
        let key: String?
        let order: Int
    }

    private struct Found {
        let path: [Step]
        let sequence: Int
        let violation: (schemaPath: String, keyword: String, message: String)
    }

    /// The violations found, in document order of the instance.
    func violations() -> [SchemaViolation] {
        found.sorted { a, b in
            for (x, y) in zip(a.path, b.path) where x.order != y.order { return x.order < y.order }
            return a.path.count != b.path.count ? a.path.count < b.path.count : a.sequence < b.sequence
        }.map {
            SchemaViolation(instancePointer: Self.pointer($0.path), schemaPath: $0.violation.schemaPath,
                            keyword: $0.violation.keyword, message: $0.violation.message)
        }
    }

    private static func pointer(_ path: [Step]) -> String {
        var out = ""
        for step in path { out += "/" + (step.key.map(JSONPointer.escape) ?? String(step.order)) }
        return out
    }

    private mutating func record(_ n: Int, _ keyword: String, _ message: String, extra: Step? = nil) {
        // A document full of failing items lists the first ones, not a copy of itself per item.
        guard found.count < JSONSchema.maxViolations else { return }
        let node = nodes[n]
        var at = path
        if let extra { at.append(extra) }
        let schemaPath = keyword == "false" || keyword.isEmpty ? node.location : node.location + "/" + keyword
        found.append(Found(path: at, sequence: found.count, violation: (schemaPath, keyword, message)))
    }

    // MARK: - Nodes

    /// Whether `value` is valid against node `n`; records violations when `collect`.
    mutating func evaluate(_ n: Int, _ value: JSONValue, collect: Bool) -> Bool {
        // Read in place (by index, no copy of the node): this runs for every value of every write.
        if let boolean = nodes[n].boolean {
            if !boolean && collect { recordFalse(n) }
            return boolean
        }
        depth += 1
        defer { depth -= 1 }
        guard depth <= Self.maxEvaluationDepth else {
            if collect { record(n, "", "the value nests too deep for this schema (more than \(Self.maxEvaluationDepth) schema levels)") }
            return false
        }
        var valid = true
        let keywords = nodes[n].keywords
        for i in keywords.indices where !check(keywords[i], n, value, collect: collect) {
            valid = false
            if !collect { return false }
        }
        return valid
    }

    private mutating func recordFalse(_ n: Int) {
        let node = nodes[n]
        switch node.holder {
        case "properties", "patternProperties", "additionalProperties":
            let name = path.last?.key ?? ""
            record(n, "false", "property \"\(name)\" is not allowed", keywordOverride: node.holder)
        default:
            record(n, "false", "no value is allowed here (the schema is false)", keywordOverride: node.holder.isEmpty ? "false" : node.holder)
        }
    }

    private mutating func record(_ n: Int, _ keyword: String, _ message: String, keywordOverride: String) {
        guard found.count < JSONSchema.maxViolations else { return }
        found.append(Found(path: path, sequence: found.count, violation: (nodes[n].location, keywordOverride, message)))
    }

    /// Evaluates a branch that only decides (anyOf, not, if, contains): its
    /// references are kept only when it passes and `keep` says so.
    private mutating func probe(_ n: Int, _ value: JSONValue) -> Bool {
        let mark = references?.count ?? 0
        let valid = evaluate(n, value, collect: false)
        if !valid { references?.removeSubrange(mark...) }
        return valid
    }

    private mutating func descend<T>(_ step: Step, _ body: (inout SchemaEvaluator) -> T) -> T {
        guard tracksPath else { return body(&self) }
        path.append(step)
        defer { path.removeLast() }
        return body(&self)
    }

    // MARK: - Keywords

    private mutating func check(_ keyword: SchemaKeyword, _ node: Int, _ value: JSONValue, collect: Bool) -> Bool {
        let name = keyword.name
        func fail(_ message: @autoclosure () -> String, keyword: String? = nil, extra: Step? = nil) -> Bool {
            if collect { record(node, keyword ?? name, message(), extra: extra) }
            return false
        }
        switch keyword.check {
        case .type(let types):
            if types.admits(value) { return true }
            return fail("must be \(types.description), not \(Self.describe(value))")
        case .enumeration(let allowed):
            if allowed.contains(value) { return true }
            return fail(Self.enumMessage(allowed.values))
        case .constant(let expected):
            if JSONEquivalence.equal(expected, value) { return true }
            return fail("must be \(Self.excerpt(expected))")
        case .bound(let bound, let limit):
            guard let c = SchemaNumber.compare(value, limit) else { return true }
            let text = SchemaNumber.text(limit)
            switch bound {
            case .minimum: return c >= 0 || fail("must be at least \(text)")
            case .maximum: return c <= 0 || fail("must be at most \(text)")
            case .exclusiveMinimum: return c > 0 || fail("must be greater than \(text)")
            case .exclusiveMaximum: return c < 0 || fail("must be less than \(text)")
            }
        case .multipleOf(let divisor):
            guard value.isNumber else { return true }
            return SchemaNumber.isMultiple(value, of: divisor) || fail("must be a multiple of \(SchemaNumber.text(divisor))")
        case .minLength(let min):
            guard case .string(let s) = value else { return true }
            if (min < Int.max / 4 && s.utf8.count >= min * 4) || s.unicodeScalars.count >= min { return true }
            return fail("must be at least \(min) character\(min == 1 ? "" : "s") long")
        case .maxLength(let max):
            guard case .string(let s) = value else { return true }
            if s.utf8.count <= max || s.unicodeScalars.count <= max { return true }
            return fail("must be at most \(max) character\(max == 1 ? "" : "s") long")
        case .pattern(let pattern):
            guard case .string(let s) = value else { return true }
            return pattern.matches(s) || fail("must match the pattern \"\(pattern.source)\"")
        case .format(let format):
            if let problem = format.problem(with: value) { return fail(problem) }
            if case .reference(let collection) = format, references != nil {
                references!.append((Self.pointer(path), collection))
            }
            return true
        case .minItems(let min):
            guard case .array(let items) = value else { return true }
            return items.count >= min || fail("must have at least \(min) item\(min == 1 ? "" : "s")")
        case .maxItems(let max):
            guard case .array(let items) = value else { return true }
            return items.count <= max || fail("must have at most \(max) item\(max == 1 ? "" : "s")")
        case .uniqueItems:
            guard case .array(let items) = value, let (i, j) = Self.firstDuplicate(items) else { return true }
            return fail("must not repeat items (items \(i) and \(j) are equal)")
        case .items(let prefix, let rest):
            guard case .array(let items) = value else { return true }
            var valid = true
            for (i, item) in items.enumerated() {
                guard let schema = i < prefix.count ? prefix[i] : rest else { break }
                if !descend(Step(key: nil, order: i), { $0.evaluate(schema, item, collect: collect) }) {
                    valid = false
                    if !collect { return false }
                }
            }
            return valid
        case .contains(let schema, let min, let max):
            guard case .array(let items) = value else { return true }
            var matches = 0
            for (i, item) in items.enumerated() where descend(Step(key: nil, order: i), { $0.probe(schema, item) }) {
                matches += 1
                if max == nil && matches >= min && references == nil { break }
            }
            if matches < min {
                return fail("must contain at least \(min) item\(min == 1 ? "" : "s") matching the contains schema (has \(matches))",
                            keyword: name == "contains" && min != 1 ? "minContains" : "contains")
            }
            if let max, matches > max {
                return fail("must contain at most \(max) item\(max == 1 ? "" : "s") matching the contains schema (has \(matches))", keyword: "maxContains")
            }
            return true
        case .members(let members):
            guard case .object(let object) = value else { return true }
            return checkMembers(members, object, collect: collect)
        case .required(let names):
            guard case .object(let object) = value else { return true }
            var valid = true
            for (i, property) in names.enumerated() where object[property] == nil {
                valid = false
                if !collect { return false }
                _ = fail("required property \"\(property)\" is missing", extra: Step(key: property, order: object.count + i))
            }
            return valid
        case .minProperties(let min):
            guard case .object(let object) = value else { return true }
            return object.count >= min || fail("must have at least \(min) propert\(min == 1 ? "y" : "ies")")
        case .maxProperties(let max):
            guard case .object(let object) = value else { return true }
            return object.count <= max || fail("must have at most \(max) propert\(max == 1 ? "y" : "ies")")
        case .propertyNames(let schema):
            guard case .object(let object) = value else { return true }
            var valid = true
            for key in object.keys where !evaluate(schema, .string(key), collect: false) {
                valid = false
                if !collect { return false }
                _ = fail("property name \"\(key)\" does not match propertyNames")
            }
            return valid
        case .dependentRequired(let rules):
            guard case .object(let object) = value else { return true }
            var valid = true
            for rule in rules where object[rule.property] != nil {
                for (i, property) in rule.requires.enumerated() where object[property] == nil {
                    valid = false
                    if !collect { return false }
                    _ = fail("property \"\(property)\" is required when \"\(rule.property)\" is present",
                             extra: Step(key: property, order: object.count + i))
                }
            }
            return valid
        case .dependentSchemas(let rules):
            guard case .object(let object) = value else { return true }
            var valid = true
            for rule in rules where object[rule.property] != nil && !evaluate(rule.schema, value, collect: collect) {
                valid = false
                if !collect { return false }
            }
            return valid
        case .allOf(let schemas):
            var valid = true
            for schema in schemas where !evaluate(schema, value, collect: collect) {
                valid = false
                if !collect { return false }
            }
            return valid
        case .anyOf(let schemas):
            for schema in schemas where probe(schema, value) { return true }
            return fail("must match at least one of the \(schemas.count) schemas in anyOf")
        case .oneOf(let schemas):
            let mark = references?.count ?? 0
            var passing: [Int] = []
            for (i, schema) in schemas.enumerated() where probe(schema, value) {
                passing.append(i)
                if passing.count > 1 { break }
            }
            if passing.count == 1 { return true }
            references?.removeSubrange(mark...)
            if passing.isEmpty { return fail("must match exactly one of the \(schemas.count) schemas in oneOf, but matches none") }
            return fail("must match exactly one of the \(schemas.count) schemas in oneOf, but matches \(passing[0]) and \(passing[1])")
        case .not(let schema):
            let mark = references?.count ?? 0
            let matched = evaluate(schema, value, collect: false)
            references?.removeSubrange(mark...)
            return !matched || fail("must not match the schema in not")
        case .conditional(let condition, let then, let otherwise):
            let branch = probe(condition, value) ? then : otherwise
            guard let branch else { return true }
            return evaluate(branch, value, collect: collect)
        case .ref(let target):
            return evaluate(target, value, collect: collect)
        }
    }

    private mutating func checkMembers(_ members: SchemaMembers, _ object: JSONObject, collect: Bool) -> Bool {
        var valid = true
        let objectMembers = object.members
        for position in objectMembers.indices {
            let member = objectMembers[position]
            let step = Step(key: member.key, order: position)
            var matched = false
            if let schema = members.property(member.key) {
                matched = true
                if !descend(step, { $0.evaluate(schema, member.value, collect: collect) }) {
                    valid = false
                    if !collect { return false }
                }
            }
            for (pattern, schema) in members.patterns where pattern.matches(member.key) {
                matched = true
                if !descend(step, { $0.evaluate(schema, member.value, collect: collect) }) {
                    valid = false
                    if !collect { return false }
                }
            }
            if !matched, let schema = members.additional,
               !descend(step, { $0.evaluate(schema, member.value, collect: collect) }) {
                valid = false
                if !collect { return false }
            }
        }
        return valid
    }

    // MARK: - Messages

    static func describe(_ value: JSONValue) -> String {
        switch value {
        case .int, .double: return SchemaNumber.isInteger(value) ? "an integer" : "a number with a fraction"
        default: return GeoPointFormat.article(value.typeName)
        }
    }

    static func enumMessage(_ values: [JSONValue]) -> String {
        if values.count <= 6 {
            return "must be one of " + values.map(excerpt).joined(separator: ", ")
        }
        return "must be one of the \(values.count) values listed in enum"
    }

    /// A value as short JSON for a message.
    static func excerpt(_ value: JSONValue) -> String {
        let text = value.jsonText
        return text.count <= 40 ? text : String(text.prefix(37)) + "…"
    }

    /// The first two equal items, by JSON Schema equality.
    static func firstDuplicate(_ items: [JSONValue]) -> (Int, Int)? {
        if items.count <= 16 {
            for j in items.indices {
                for i in 0..<j where JSONEquivalence.equal(items[i], items[j]) { return (i, j) }
            }
            return nil
        }
        var seen: [JSONEquivalence: Int] = [:]
        for (j, item) in items.enumerated() {
            if let i = seen.updateValue(j, forKey: JSONEquivalence(item)) { return (i, j) }
        }
        return nil
    }
}
