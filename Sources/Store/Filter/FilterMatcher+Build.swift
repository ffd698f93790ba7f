import JSON

/// Preparing the tree for evaluation: each `Filter` clause and operator
/// becomes the node that tests it, with literals and regular expressions
/// prepared once. The walk is `FilterCompiler.compileClauses`' and
/// `compileOperators`', making nodes where it makes SQL.
extension FilterMatcher {
    static func node(_ clauses: [Filter.Clause]) throws(QueryError) -> Node {
        var nodes: [Node] = []
        for clause in clauses {
            switch clause {
            case .group(let group, let entries):
                var parts: [Node] = []
                for entry in entries { parts.append(try node(entry)) }
                nodes.append(group == .and ? .and(parts) : group == .or ? .or(parts) : .not(.or(parts)))
            case .equals(let path, let value):
                nodes.append(.field(Path(path.components[...]), expand: true, .equals(literal(value))))
            case .field(let path, let ops):
                nodes.append(try operators(ops, path: path.components[...], expand: true))
            }
        }
        return .and(nodes)
    }

    /// An operator object: every operator must hold on the value at `path`.
    static func operators(_ ops: [Filter.Operator], path: ArraySlice<String>, expand: Bool) throws(QueryError) -> Node {
        let p = Path(path)
        var nodes: [Node] = []
        for op in ops {
            switch op {
            case .eq(let arg):
                nodes.append(.field(p, expand: expand, .equals(literal(arg))))
            case .ne(let arg):
                nodes.append(.not(.field(p, expand: expand, .equals(literal(arg)))))
            case .compare(let comparison, let arg):
                let order: Order = [.gt: .gt, .gte: .gte, .lt: .lt, .lte: .lte][comparison]!
                nodes.append(.field(p, expand: expand, .compare(order, bound(arg, order))))
            case .oneOf(let values, let negated):
                let positive: Node = values.isEmpty ? .constant(false) : .field(p, expand: expand, .equalsAny(LiteralSet(values.map(literal))))
                nodes.append(negated ? .not(positive) : positive)
            case .exists(let wanted):
                let exists = Node.field(p, expand: false, .exists)
                nodes.append(wanted ? exists : .not(exists))
            case .not(let inner):
                nodes.append(.not(try operators(inner, path: path, expand: expand)))
            case .all(let entries):
                if entries.isEmpty { nodes.append(.constant(false)); continue }
                for entry in entries {
                    switch entry {
                    case .operators(let inner): nodes.append(try operators(inner, path: path, expand: expand))
                    case .value(let value): nodes.append(.field(p, expand: expand, .equals(literal(value))))
                    }
                }
            case .size(let size):
                nodes.append(.field(p, expand: false, .size(size)))
            case .elemMatch(.operators(let inner)):
                nodes.append(.field(p, expand: false, .elemMatch(try operators(inner, path: [], expand: false), operatorForm: true)))
            case .elemMatch(.document(let clauses)):
                nodes.append(.field(p, expand: false, .elemMatch(try node(clauses), operatorForm: false)))
            case .regex(let source, let flags):
                nodes.append(.field(p, expand: expand, .regex(try Regex(source, flags: flags))))
            case .mod(let divisor, let remainder):
                nodes.append(.field(p, expand: expand, .mod(divisor: divisor, remainder: remainder)))
            case .type(let classes):
                nodes.append(.field(p, expand: expand, .type(classes)))
            case .geoWithin(let shape):
                nodes.append(.geo(Array(path), .within(shape)))
            case .nearSphere(let near):
                nodes.append(.geo(Array(path), .near(near)))
            }
        }
        return .and(nodes)
    }

    static func literal(_ value: JSONValue) -> Literal {
        switch value {
        case .null: return .null
        case .bool(let b): return .bool(b)
        case .int(let i): return .number(.int(i))
        case .double(let d): return .number(.double(d))
        case .string(let s): return .string(s)
        case .array: return .container(isArray: true, text: value.jsonText)
        case .object: return .container(isArray: false, text: value.jsonText)
        }
    }

    /// The other side of `$gt` and friends, by type bracket (`FilterCompiler.comparison`).
    static func bound(_ value: JSONValue, _ order: Order) -> Bound {
        switch value {
        case .int(let i): return .number(.int(i))
        case .double(let d): return .number(.double(d))
        case .string(let s): return .string(s)
        case .bool(let b): return .bool(b ? 1 : 0)
        case .null: return order == .gte || order == .lte ? .null : .never
        case .array, .object: return .never // refused by the parser
        }
    }
}
