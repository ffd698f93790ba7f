/// Checks that compiled nodes cannot loop: following the subschemas that apply
/// to the same value (`$ref`, `allOf`, `anyOf`, `oneOf`, `not`, `if`/`then`/`else`,
/// `dependentSchemas`) must never come back to where it started (`{"$ref": "#"}`),
/// and such chains are at most `maxChain` long, so validation's recursion is bounded.
enum SchemaGraph {
    static func check(_ nodes: [SchemaNode], maxChain: Int) throws(SchemaError) {
        // 0 unvisited, 1 on the path, 2 done; height: longest in-place chain from the node.
        var state = [UInt8](repeating: 0, count: nodes.count)
        var height = [Int](repeating: 1, count: nodes.count)
        for start in nodes.indices where state[start] == 0 {
            var stack: [(node: Int, next: Int, edges: [Int])] = [(start, 0, inPlace(nodes[start]))]
            state[start] = 1
            while !stack.isEmpty {
                let top = stack.count - 1
                let (n, next, edges) = stack[top]
                if next < edges.count {
                    stack[top].next += 1
                    let child = edges[next]
                    switch state[child] {
                    case 1:
                        throw .invalid(pointer: nodes[child].location,
                                       message: "this schema applies itself to the same value again (a $ref cycle such as {\"$ref\": \"#\"}), so validation would never end")
                    case 0:
                        state[child] = 1
                        stack.append((child, 0, inPlace(nodes[child])))
                    default:
                        height[n] = max(height[n], height[child] + 1)
                    }
                } else {
                    state[n] = 2
                    stack.removeLast()
                    if let parent = stack.last?.node { height[parent] = max(height[parent], height[n] + 1) }
                    if height[n] > maxChain {
                        throw .invalid(pointer: nodes[n].location,
                                       message: "subschemas applied to the same value ($ref, allOf, …) chain more than \(maxChain) deep")
                    }
                }
            }
        }
    }

    /// The nodes `node` applies to the value it is given.
    static func inPlace(_ node: SchemaNode) -> [Int] {
        var edges: [Int] = []
        for keyword in node.keywords {
            switch keyword.check {
            case .ref(let n), .not(let n): edges.append(n)
            case .allOf(let list), .anyOf(let list), .oneOf(let list): edges += list
            case .conditional(let i, let t, let e): edges.append(i); t.map { edges.append($0) }; e.map { edges.append($0) }
            case .dependentSchemas(let list): edges += list.map(\.schema)
            default: break
            }
        }
        return edges
    }
}
