import JSON

/// A JSON Schema (draft 2020-12, the keywords listed in docs/SCHEMAS.md) compiled
/// once to a tree of checks, then used to validate documents without re-reading it.
///
///     let schema = try JSONSchema(schemaValue)
///     let problems = schema.validate(document)   // [] when valid
///     let refs = schema.references(in: document) // [(pointer, collection)]
///
/// Safe to share between threads.
public struct JSONSchema: Sendable {
    /// How deep subschemas may nest in a schema, and how long a chain of subschemas
    /// applied to the same value (`$ref`, `allOf`, …) may be.
    public static let maxDepth = 64
    /// The most violations one validation lists (the first found); the document is invalid either way.
    public static let maxViolations = 100

    private let program: Program

    /// The compiled nodes, shared by copies of the schema.
    private final class Program: Sendable {
        let nodes: [CompiledNode]
        let hasReferences: Bool
        init(nodes: [SchemaNode]) {
            self.nodes = nodes.map(CompiledNode.init)
            hasReferences = nodes.contains { node in
                node.keywords.contains { if case .format(.reference) = $0.check { return true } else { return false } }
            }
        }
    }

    /// Compiles a schema. Throws `SchemaError.invalid(pointer:message:)` for a schema
    /// that is not valid, uses an unsupported keyword (`$dynamicRef`, `unevaluated*`,
    /// a `$ref` to another document, …), an unknown keyword or format, a bad regular
    /// expression, a `$ref` cycle that would never end, or nests more than `maxDepth`.
    /// Annotations (`title`, `description`, `examples`, `default`, `$comment`,
    /// `deprecated`, `readOnly`, `writeOnly`, `content*`, and any `x-` keyword) are accepted.
    public init(_ schema: JSONValue) throws(SchemaError) {
        let compiler = try SchemaCompiler(root: schema, maxDepth: Self.maxDepth)
        try SchemaGraph.check(compiler.nodes, maxChain: Self.maxDepth)
        program = Program(nodes: compiler.nodes)
    }

    /// Every violation, in document order of the instance: its JSON Pointer ("" for the
    /// root), the keyword's path in the schema, the keyword, and an English message.
    /// Empty when the instance is valid.
    public func validate(_ instance: JSONValue) -> [SchemaViolation] {
        // Most documents are valid: decide that first without keeping instance paths,
        // then walk again collecting every violation only when there is one.
        if isValid(instance) { return [] }
        var evaluator = SchemaEvaluator(nodes: program.nodes, collectReferences: false)
        if evaluator.evaluate(0, instance, collect: true) { return [] }
        return evaluator.violations()
    }

    /// Whether the instance is valid, stopping at the first violation.
    public func isValid(_ instance: JSONValue) -> Bool {
        var evaluator = SchemaEvaluator(nodes: program.nodes, collectReferences: false, tracksPath: false)
        return evaluator.evaluate(0, instance, collect: false)
    }

    /// The values the schema declares as references to a collection
    /// (`"format": "reference"`, `"x-roost-collection": name`), as (JSON Pointer,
    /// collection) in document order, for the store to check that they exist.
    /// Values in branches that do not apply (a failing `anyOf` alternative, `not`,
    /// an `if` that fails) are not reported.
    public func references(in instance: JSONValue) -> [(pointer: String, collection: String)] {
        check(instance).references
    }

    /// Violations and references in one pass, for a write that needs both.
    public func check(_ instance: JSONValue) -> (violations: [SchemaViolation], references: [(pointer: String, collection: String)]) {
        var evaluator = SchemaEvaluator(nodes: program.nodes, collectReferences: program.hasReferences)
        let valid = evaluator.evaluate(0, instance, collect: true)
        var seen = Set<String>()
        let references = (evaluator.references ?? []).filter { seen.insert($0.pointer).inserted }
        return (valid ? [] : evaluator.violations(), references)
    }
}
