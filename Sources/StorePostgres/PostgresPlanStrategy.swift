import JSON

/// The strategy `explain=true` names for a list on PostgreSQL, read from
/// the planner's own plan (`EXPLAIN (FORMAT JSON)`), in SQLite's words:
///
/// - `index-walk`: the page's rows come from an index scan in the list's
///   order, under the LIMIT, with no sort: the walk stops at the page.
/// - `index-lookup`: an index finds the matches, which are then sorted (or
///   counted past) before the page.
/// - `scan`: no index serves the list's own rows.
///
/// Gates and other subplans (`InitPlan`, `SubPlan`) are not the list's rows and are not looked at.
enum PostgresPlanStrategy {
    static let indexScans: Set<String> = ["Index Scan", "Index Only Scan"]

    static func name(ofJSONPlan text: String) -> String {
        guard let root = (try? JSONParser.parse(text))?.arrayValue?.first?.objectValue?["Plan"] else { return "scan" }
        if walks(root) { return "index-walk" }
        return usesIndex(root) ? "index-lookup" : "scan"
    }

    /// The node's children that produce its rows (not its subplans).
    static func inputs(_ node: JSONValue) -> [JSONValue] {
        (node.objectValue?["Plans"]?.arrayValue ?? []).filter { child in
            let relation = child.objectValue?["Parent Relationship"]?.stringValue ?? ""
            return relation != "InitPlan" && relation != "SubPlan"
        }
    }

    /// A Limit over an index scan, through nodes that keep the order (a gate's Result).
    static func walks(_ node: JSONValue) -> Bool {
        guard node.objectValue?["Node Type"]?.stringValue == "Limit", var below = inputs(node).first else { return false }
        while below.objectValue?["Node Type"]?.stringValue == "Result", let next = inputs(below).first { below = next }
        return indexScans.contains(below.objectValue?["Node Type"]?.stringValue ?? "")
    }

    static func usesIndex(_ node: JSONValue) -> Bool {
        let type = node.objectValue?["Node Type"]?.stringValue ?? ""
        return indexScans.contains(type) || type == "Bitmap Index Scan" || inputs(node).contains(where: usesIndex)
    }
}
