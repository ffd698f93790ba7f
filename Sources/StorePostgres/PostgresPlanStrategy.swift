import JSON

/// The strategy `explain=true` names for a list on PostgreSQL, read from
/// the planner's own plan (`EXPLAIN (FORMAT JSON)`), in SQLite's words:
///
/// - `index-walk`: the page's rows come from an index scan in the list's
///   order, under the LIMIT, with no sort: the walk stops at the page.
/// - `index-lookup`: an index finds the matches, which are then sorted (or
///   counted past) before the page.
/// - `geo-walk`: a box's points table is walked along its primary key
///   (`PostgresBoxWalk`), stopping at the page.
/// - `scan`: no value index serves the list's own rows (a list in row
///   order that reads the primary key in that order is one too).
///
/// Gates and other subplans (`InitPlan`, `SubPlan`) are not the list's rows and are not looked at.
enum PostgresPlanStrategy {
    static let indexScans: Set<String> = ["Index Scan", "Index Only Scan"]

    /// `insertionOrder`: the list is in row order (no sort key), where a
    /// value index walked under the Limit is an equality's entries in row
    /// order, which SQLite calls `index-lookup` too.
    static func name(ofJSONPlan text: String, insertionOrder: Bool = false) -> String {
        guard let root = (try? JSONParser.parse(text))?.arrayValue?.first?.objectValue?["Plan"] else { return "scan" }
        if walksPoints(root) { return "geo-walk" }
        if let walked = walkedIndex(root) {
            // In row order, the primary key's walk is SQLite's scan in row order, stopping at the page too.
            guard insertionOrder else { return "index-walk" }
            return walked.hasSuffix("_pkey") ? "scan" : "index-lookup"
        }
        return usesIndex(root) ? "index-lookup" : "scan"
    }

    /// The node's children that produce its rows (not its subplans).
    static func inputs(_ node: JSONValue) -> [JSONValue] {
        (node.objectValue?["Plans"]?.arrayValue ?? []).filter { child in
            let relation = child.objectValue?["Parent Relationship"]?.stringValue ?? ""
            return relation != "InitPlan" && relation != "SubPlan"
        }
    }

    /// The index of a Limit over an index scan, through nodes that keep the order (a gate's Result).
    /// A skip page's deferred join (`PostgresDocumentReader.listStatement`)
    /// has its Limit below the join that fetches the page's rows: that Limit is the walk's.
    static func walkedIndex(_ node: JSONValue) -> String? {
        guard node.objectValue?["Node Type"]?.stringValue == "Limit" else {
            return inputs(node).lazy.compactMap { walkedIndex($0) }.first
        }
        guard var below = inputs(node).first else { return nil }
        while below.objectValue?["Node Type"]?.stringValue == "Result", let next = inputs(below).first { below = next }
        guard indexScans.contains(below.objectValue?["Node Type"]?.stringValue ?? "") else { return nil }
        return below.objectValue?["Index Name"]?.stringValue ?? ""
    }

    /// Whether the rows come from a scan of a points table's primary key (`PostgresGeoPoints`).
    static func walksPoints(_ node: JSONValue) -> Bool {
        let index = node.objectValue?["Index Name"]?.stringValue ?? ""
        return (indexScans.contains(node.objectValue?["Node Type"]?.stringValue ?? "") && index.hasPrefix("c_") && index.hasSuffix("_p_pkey"))
            || inputs(node).contains(where: walksPoints)
    }

    static func usesIndex(_ node: JSONValue) -> Bool {
        let type = node.objectValue?["Node Type"]?.stringValue ?? ""
        return indexScans.contains(type) || type == "Bitmap Index Scan" || inputs(node).contains(where: usesIndex)
    }
}
