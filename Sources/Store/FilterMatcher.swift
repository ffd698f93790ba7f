import JSON

/// A filter compiled once into a tree and evaluated on documents in memory,
/// with exactly the semantics of the SQL that `FilterCompiler` makes for it
/// (proved by the differential test against SQLite in `StoreTests`).
///
/// Paths walk documents as the compiler's `anyValue` does: a condition on
/// an array tries its elements, paths descend through arrays of documents,
/// numeric parts also index arrays, and a missing value is `null`. Values
/// compare as SQLite compares what `json_extract` yields: numbers exactly
/// (integer against real), strings by UTF-8 bytes, arrays and documents by
/// their compact JSON text. `$regex` runs the same PCRE2 code with the same
/// options and limits; the geo operators repeat the compiler's arithmetic
/// with the same C math functions.
///
/// Two differences are by design: a `$regex` that hits its backtracking
/// limit makes the whole filter fail to match (as the SQL probe did), where
/// a list query answers 400; and `$nearSphere` inside `$elemMatch` is
/// refused here, because a list's SQL for it fails in SQLite (it orders by
/// a distance that refers to the element's row, outside that row's scope).
///
/// Not thread-safe (a regex holds its PCRE2 match data): use one matcher
/// from one thread at a time.
///
/// ```swift
/// let m = try FilterMatcher(json(#"{"tags": "red", "n": {"$gt": 2}}"#))
/// m.matches(json(#"{"tags": ["red", "blue"], "n": 3}"#)) // true
/// ```
public final class FilterMatcher {
    let root: Node
    /// `{}` (or only `$comment`): every document matches.
    public let matchesAll: Bool

    /// Compiles `filter`, refusing exactly what `FilterCompiler` refuses.
    public init(_ filter: JSONValue) throws(QueryError) {
        let compiler = FilterCompiler(dialect: RefusalDialect())
        compiler.useIndexes = false
        _ = try compiler.compile(filter) // the same refusals, limits and messages
        conditions = compiler.conditions
        guard case .object(let object) = filter else { throw .invalid("The query must be a JSON object.") }
        root = try Self.document(object)
        if case .and(let parts) = root { matchesAll = parts.isEmpty } else { matchesAll = false }
    }

    /// Whether `document` (a JSON object as stored, with its `_id`) matches.
    public func matches(_ document: JSONValue) -> Bool {
        evaluate(document, allowance: .max).verdict ?? false
    }

    /// Whether `document` matches, deciding in at most `allowance` steps
    /// (see `Meter`): the verdict, nil when the allowance ran out first, and
    /// the steps taken.
    public func evaluate(_ document: JSONValue, allowance: Int) -> (verdict: Bool?, steps: Int) {
        if matchesAll { return (true, 0) }
        let meter = Meter(allowance: allowance)
        do { return (try root.holds(on: document, meter), meter.used) } catch {
            return (meter.exhausted ? nil : false, meter.used)
        }
    }

    /// Conditions in the filter, as `QueryLimits.maxConditions` counts them.
    public let conditions: Int

    /// A `$regex` past PCRE2's limits: the document does not match.
    struct Abort: Error {}

    /// A condition on the document (or on an array element inside `$elemMatch`).
    indirect enum Node {
        case constant(Bool)
        case and([Node])
        case or([Node])
        /// `NOT coalesce(x, 0)`: SQL NULL counts as false first.
        case not(Node)
        /// Some value reached along `path` satisfies `test`; with `expand`,
        /// also an element of an array reached there (`FilterCompiler.anyValue`).
        case field(Path, expand: Bool, Test)
        /// A geo condition on the point at a plain (object-only) path.
        case geo([String], GeoTest)
    }

    /// A dotted path: its first key, looked up on the root, then walk steps.
    struct Path {
        let first: String?
        let steps: [PathWalkStep]

        init(_ components: ArraySlice<String>) {
            first = components.first
            steps = components.dropFirst().map { PathWalkStep(key: $0, index: FieldPath.isArrayIndex($0) ? Int($0) : nil) }
        }
    }

    /// A test on one value reached by a path; `nil` is a missing value (SQL type NULL).
    indirect enum Test {
        case equals(Literal)
        case equalsAny(LiteralSet)
        case compare(Order, Bound)
        case regex(Regex)
        case mod(divisor: Int64, remainder: Int64)
        case type([TypeClass])
        case exists
        case size(Int64)
        /// An array with an element that satisfies `node` (taken as its root);
        /// in the object form the element must also be a document.
        case elemMatch(Node, operatorForm: Bool)
    }

    /// A literal of an equality, prepared once.
    enum Literal {
        case null
        case bool(Bool)
        case number(SQLNumber)
        case string(String)
        /// An array or document: equal when the value's compact JSON text is.
        case container(isArray: Bool, text: String)
    }

    enum Order {
        case gt, gte, lt, lte

        func holds(_ order: Int) -> Bool {
            switch self {
            case .gt: return order > 0
            case .gte: return order >= 0
            case .lt: return order < 0
            case .lte: return order <= 0
            }
        }
    }

    /// The other side of `$gt` and friends, by type bracket.
    enum Bound {
        case number(SQLNumber)
        case string(String)
        case bool(Int)
        /// `$gte: null` and `$lte: null`: equality with null.
        case null
        case never
    }

    enum TypeClass {
        case number, string, object, array, bool, null
    }

    /// A compiled `$regex`, run exactly as the SQL `regexp` function runs it.
    final class Regex {
        let compiled: RegexFunction.Compiled

        init(_ source: String, flags: String) throws(QueryError) {
            var source = source
            let made: RegexFunction.Compiled? = source.withUTF8 { bytes in try? RegexFunction.Compiled(pattern: bytes, flags: flags) }
            guard let made else { throw .invalid("The regular expression does not compile.") }
            compiled = made
        }

        func matches(_ subject: String) throws(Abort) -> Bool {
            var subject = subject
            let result = subject.withUTF8 { compiled.matches($0.baseAddress ?? RegexFunction.empty, $0.count) }
            guard let result else { throw Abort() }
            return result == 1
        }
    }
}
