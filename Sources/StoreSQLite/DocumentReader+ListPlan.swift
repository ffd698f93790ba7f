import JSON
import Store

extension DocumentReader {
    /// At most this many index matches, a sorted list gathers its matches
    /// through the index and sorts them; past it, it walks the sort's index.
    static let gatherLimit = 2000

    /// Chooses how to read `query` and writes its SQL.
    ///
    /// A private read (`guarded`) never walks a value index: the order in
    /// which it would meet rows the caller cannot read would show in its
    /// timing. Its filter runs only on visible rows (`visibleFirst`).
    func listPlan(_ layout: CollectionLayout, _ query: FindQuery, scope: AccessScope, redaction: Redaction?) throws -> ListPlan {
        let guarded = scope.hidesRows
        let probe = makeCompiler(layout, guarded: guarded)
        let probed = try probe.compile(query.filter)
        let walk = guarded || probed.nearestFirst != nil ? nil : try chooseWalk(layout, query, probed)
        // A walk filters the rows it meets: its filter must not make SQLite
        // gather index matches first, so it is compiled without them.
        var compiler = walk == nil ? probe : makeCompiler(layout, guarded: true)
        let wanted = query.skip > Int.max - query.limit ? Int.max : query.limit + query.skip
        // An unsorted top-level `$geoWithin` walks its box's points in row order (`geoWalk`).
        let geoWalk = walk == nil && query.sort.isEmpty && probed.streamable == nil && probed.nearestFirst == nil && probed.geoDriver != nil
        if walk == nil, query.sort.isEmpty, probed.streamable == nil, try geoWalk || boxesHoldMany(layout, probed, rows: wanted) {
            compiler = makeCompiler(layout)
            compiler.geoPerRow = true
        }
        let filter = compiler === probe ? probed : try compiler.compile(query.filter)
        let bind = compiler.bind

        var keys: [SortKey]
        var order: String
        if query.sort.isEmpty, let near = filter.nearestFirst {
            keys = [SortKey(bracket: nil, value: near, ascending: true, indexed: false)]
            order = "~near"
        } else if query.sort.isEmpty, let walk {
            keys = [SortKey.make(walk.field, ascending: true, layout: layout, bind: bind)]
            order = "~\(walk.field):1"
        } else {
            keys = query.sort.map { SortKey.make($0.field, ascending: $0.ascending, layout: walk == nil ? nil : layout, bind: bind) }
            order = query.sort.map { "\($0.field):\($0.ascending ? 1 : -1)" }.joined(separator: ",")
        }
        let ridAscending = keys.first?.ascending ?? true
        let flat = keys.flatMap { k in k.expressions.map { (sql: $0, ascending: k.ascending) } } + [(sql: "d.rid", ascending: ridAscending)]
        let seal = try cursorSeal()
        let cursor = try query.after.map { token throws(QueryError) in try KeysetCursor(token: token, order: order, count: flat.count, seal: seal) }
        let marks = cursor?.values.map { bind($0) }

        let visible = scope.readPredicate(bind, layout: layout)
        let document = redaction?.selectSQL(bind) ?? "d.doc"
        var select = document
        if let fields = query.fields {
            let names = (["_id"] + fields).map { bind(.text($0)) }.joined(separator: ",")
            select = "(SELECT json_group_object(key, CASE type WHEN 'true' THEN json('true') WHEN 'false' THEN json('false') ELSE value END) FROM json_each(\(document)) WHERE key IN (\(names)))"
        }
        let columns = ([select] + flat.map(\.sql)).joined(separator: ", ")
        func plan(_ strategy: ListPlan.Strategy, from: String, _ segments: [ListPlan.Segment]) -> ListPlan {
            ListPlan(strategy: strategy, select: "SELECT \(columns)", from: from, segments: segments,
                     params: compiler.params, keyColumns: flat.count, order: order)
        }
        let table = "FROM \(layout.table) AS d"

        if let walk, let first = keys.first {
            let range = walk.range.map { r in (r.bracket, r.bounds.map { "\(first.value) \($0.op) \(bind($0.value))" }) }
            // A filter that is nothing but the walked range holds for every row the
            // range's bracket and bounds let through: no second test per row.
            let onlyTheRange = walk.range != nil && query.filter.objectValue?.members.map(\.key) == [walk.field]
            let segments = Self.walkSegments(first, rest: Array(flat.dropFirst(first.expressions.count)), range: range,
                                             cursor: marks, cursorValues: cursor?.values, filter: onlyTheRange ? "1" : filter.whereSQL)
            return plan(.walk, from: table, segments)
        }
        if visible == nil, query.sort.isEmpty, let nearest = filter.nearest, let distance = filter.nearestFirst {
            // Each candidate's distance is worked out once, in a subquery SQLite runs as a
            // co-routine (its `LIMIT -1` keeps it from being flattened back into the
            // statement): the selected key, the radius, the filter's own `$nearSphere`
            // terms and the order all read its `nd` column instead of measuring again.
            let measured = Self.nearestDistanceColumn
            let flatByColumn = [(sql: measured, ascending: true)] + flat.dropFirst()
            let rest = UTF8Search.replacing(distance, with: measured, in: filter.whereSQL)
            let keyset = marks.map { " AND " + ListPlan.after(flatByColumn, $0) } ?? ""
            let start = cursor == nil ? try nearestStart(nearest, wanted: wanted) : nil
            let segments = Self.widening(nearest, from: start).map { radius -> ListPlan.Segment in
                var candidates = ""
                var within = ""
                if let radius {
                    let (minX, maxX, minY, maxY) = FilterCompiler.capBox(centre: nearest.centre, radius: radius / FilterCompiler.earthRadiusMetres)
                    let box = "maxX >= \(bind(.double(minX))) AND minX <= \(bind(.double(maxX))) AND maxY >= \(bind(.double(minY))) AND minY <= \(bind(.double(maxY)))"
                    candidates = " WHERE d.rid IN (SELECT id FROM \(nearest.table) WHERE \(box))"
                    within = "\(measured) <= \(bind(.double(radius))) AND "
                }
                let from = "FROM (SELECT d.*, \(distance) AS nd FROM \(layout.table) AS d\(candidates) LIMIT -1) AS d"
                return .init(condition: "\(within)(\(rest))\(keyset)", orderBy: ListPlan.orderBy(flatByColumn), from: from)
            }
            let columns = ([select] + flatByColumn.map(\.sql)).joined(separator: ", ")
            return ListPlan(strategy: .nearest, select: "SELECT \(columns)", from: table, segments: segments, params: compiler.params,
                            keyColumns: flat.count, order: order, distanceKey: select == "d.doc")
        }
        if visible == nil, let driver = filter.streamable, query.sort.isEmpty, filter.nearestFirst == nil {
            let condition = marks.map { "m.rid > \($0[0])" } ?? "1"
            return plan(.lookup, from: "FROM (\(driver)) AS m JOIN \(layout.table) AS d ON d.rid = m.rid",
                        [.init(condition: condition, orderBy: "m.rid")])
        }
        let own = scope.visibleRows(layout, bind).map { "\($0) AND " } ?? ""
        if geoWalk, visible == nil, let driver = filter.geoDriver, let start = Self.rowAfter(cursor) {
            // Rows (start, end] from the points table in row order, then the R*Tree's matches past `end`.
            let (perRow, overflow) = geoWindowPerRow.multipliedReportingOverflow(by: Int64(wanted))
            let window = overflow ? Int64.max : max(geoWindowMinimum, perRow)
            let end = start > Int64.max - window ? Int64.max : start + window
            let endRef = bind(.int(end))
            let walked = ListPlan.Segment(
                condition: "w.rid > \(bind(.int(start))) AND w.rid <= \(endRef) AND \(driver.holds("w")) AND \(own)(\(filter.whereSQL))",
                orderBy: "w.rid", from: "FROM \(driver.points) AS w CROSS JOIN \(layout.table) AS d ON d.rid = w.rid")
            let gathered = ListPlan.Segment(condition: "d.rid > \(endRef) AND d.rid IN (\(driver.gather)) AND \(own)(\(filter.whereSQL))",
                                            orderBy: ListPlan.orderBy(flat))
            return plan(.geoWalk, from: table, [walked, gathered])
        }
        let keyset = marks.map { " AND " + ListPlan.after(flat, $0) } ?? ""
        let condition = own + Self.visibleFirst(visible, "(\(filter.whereSQL))\(keyset)")
        if query.skip > 0, condition == "(1)", flat.count == 1, let rowOrder = flat.first, rowOrder.sql == "d.rid" {
            // Every row, in row order, far in: count the skipped rows off the row-id index.
            return plan(.rowPage, from: table, [.init(condition: "SELECT rid FROM \(layout.table)",
                                                      orderBy: "rid \(rowOrder.ascending ? "ASC" : "DESC")")])
        }
        return plan(.scan, from: table, [.init(condition: condition, orderBy: ListPlan.orderBy(flat))])
    }

    /// The walk a list takes, if an index can deliver its order: the first
    /// sort key's index (unless the filter's own index look-ups find few
    /// rows: gathering those and sorting them is cheaper), or, unsorted, the
    /// index of its only indexed condition when that is a range.
    func chooseWalk(_ layout: CollectionLayout, _ query: FindQuery, _ probed: CompiledFilter) throws -> (field: String, range: RangeBounds?)? {
        let builtIn: Set<String> = ["_id", "_createdAt", "_updatedAt"]
        let members = query.filter.objectValue?.members.map(\.key) ?? []
        let indexed = members.filter { $0 == "_id" || layout.indexedPaths.contains($0) }
        if let first = query.sort.first {
            guard builtIn.contains(first.field) || layout.indexedPaths.contains(first.field) else { return nil }
            // Another indexed condition may narrow the matches far below a walk's reach.
            if indexed.contains(where: { $0 != first.field }), !probed.drivingParts.isEmpty,
               try fewestMatches(probed) <= Self.gatherLimit { return nil }
            let range = builtIn.contains(first.field) || isMultikey(layout, first.field) ? nil : RangeBounds(query.filter, field: first.field)
            return (first.field, range)
        }
        guard indexed.count == 1, indexed[0] != "_id", !isMultikey(layout, indexed[0]),
              let range = RangeBounds(query.filter, field: indexed[0]) else { return nil }
        return (indexed[0], range)
    }

    /// The fewest rows one of the filter's top-level index look-ups yields, counted up to `gatherLimit + 1`.
    func fewestMatches(_ compiled: CompiledFilter) throws -> Int {
        var fewest = Int.max
        for part in compiled.drivingParts {
            let sql = "SELECT count(*) FROM (\(part) LIMIT \(Self.gatherLimit + 1))"
            let n = Int(try db.prepare(sql).firstRow(compiled.params) { $0.int(0) } ?? 0)
            fewest = min(fewest, n)
            if fewest <= Self.gatherLimit { break }
        }
        return fewest
    }

    /// True when the filter's `$geoWithin` boxes each hold so many points
    /// that walking the rows in order and testing each against the R*Tree
    /// reaches a page sooner than gathering the boxes' points first: when
    /// `rows / share` (rows walked) is below the points in the box.
    func boxesHoldMany(_ layout: CollectionLayout, _ compiled: CompiledFilter, rows: Int) throws -> Bool {
        guard !compiled.geoBoxes.isEmpty, compiled.nearestFirst == nil else { return false }
        let total = Int(try db.prepare("SELECT coalesce(max(rid), 0) FROM \(layout.table)").firstRow { $0.int(0) } ?? 0)
        // Many means more than this: counting stops there, so the estimate
        // itself costs O(√(rows × n)), not O(points in the box).
        let many = Int((4 * Double(max(rows, 1)) * Double(total)).squareRoot())
        for box in compiled.geoBoxes {
            let n = Int(try db.prepare("SELECT count(*) FROM (\(box) LIMIT \(many + 1))").firstRow(compiled.params) { $0.int(0) } ?? 0)
            if n <= many { return false }
        }
        return true
    }

    /// The row id a page in row order starts after: 0 without a cursor, nil
    /// when the cursor holds no row id (its plan then stays the general one).
    static func rowAfter(_ cursor: KeysetCursor?) -> Int64? {
        guard let cursor else { return 0 }
        guard cursor.values.count == 1, case .int(let rid) = cursor.values[0] else { return nil }
        return rid
    }

    /// The radius of a widening search's first step: 100 m, or less where
    /// the points are dense. A 100 m box holding many more points than the
    /// page wants (counted on the R*Tree, at most `nearestProbeCap`) would
    /// have every one of them measured and sorted; the step starts instead
    /// where about twice the page is expected (points per area from that
    /// count), so a page costs about the same at any density.
    func nearestStart(_ search: NearestSearch, wanted: Int) throws -> Double? {
        guard wanted < Self.nearestProbeCap / 4 else { return nil }
        let (minX, maxX, minY, maxY) = FilterCompiler.capBox(centre: search.centre, radius: 100 / FilterCompiler.earthRadiusMetres)
        let inBox = try db.prepare("""
            SELECT count(*) FROM (SELECT 1 FROM \(search.table) WHERE maxX >= ?1 AND minX <= ?2 AND maxY >= ?3 AND minY <= ?4 LIMIT ?5)
            """).firstRow([.double(minX), .double(maxX), .double(minY), .double(maxY), .int(Int64(Self.nearestProbeCap))]) { $0.int(0) } ?? 0
        guard inBox > 4 * Int64(wanted) else { return nil }
        // The circle of radius r holds about π/4 of its box's points.
        let expectedPerSquareMetre = Double(inBox) / (200 * 200)
        let radius = (2 * Double(max(wanted, 1)) / (expectedPerSquareMetre * .pi)).squareRoot()
        return max(1, min(100, radius))
    }

    /// The column of a nearest search's candidates that holds their distance in metres.
    static let nearestDistanceColumn = "d.nd"

    /// Points of a 100 m box counted at most, to size a nearest search's first step.
    static let nearestProbeCap = 4096

    /// The radii, in metres, of a widening nearest-first search: from
    /// `start` (else 100 m) twice as wide each step up to 100 m, then four
    /// times wider each step, up to `$maxDistance`; nil is the last step, the
    /// whole sphere (when no `$maxDistance` bounds it).
    static func widening(_ search: NearestSearch, from start: Double? = nil) -> [Double?] {
        let whole = Double.pi * FilterCompiler.earthRadiusMetres
        var radii: [Double?] = []
        var r = start ?? 100.0
        while r < 100, r < min(search.maxMetres ?? whole, whole) {
            radii.append(r)
            r *= 2
        }
        r = 100.0
        while r < min(search.maxMetres ?? whole, whole) {
            radii.append(r)
            r *= 4
        }
        if let max = search.maxMetres, max < whole { radii.append(max) } else { radii.append(nil) }
        return radii
    }

    func isMultikey(_ layout: CollectionLayout, _ path: String) -> Bool {
        makeCompiler(layout).isMultikey(path)
    }
}

extension DocumentReader {
    /// The segments of an index walk on `first`: with a cursor, the rest of
    /// its tie, then the rest of its bracket, then each later bracket;
    /// without, each bracket in the key's direction. `range` (a bracket and
    /// conditions on the key's value) narrows them to the filter's range.
    static func walkSegments(_ first: SortKey, rest: [(sql: String, ascending: Bool)], range: (Int64, [String])?,
                             cursor marks: [String]?, cursorValues: [SQLValue]?, filter: String) -> [ListPlan.Segment] {
        let rangeTerms = range?.1 ?? []
        let byValue = ListPlan.orderBy([(sql: first.value, ascending: first.ascending)] + rest)
        func segment(_ conditions: [String], _ orderBy: String) -> ListPlan.Segment {
            .init(condition: (conditions + rangeTerms + ["(\(filter))"]).joined(separator: " AND "), orderBy: orderBy)
        }
        var brackets: [Int64] = range.map { [$0.0] } ?? [1, 2, 3, 4, 5, 6]
        if !first.ascending { brackets.reverse() }
        guard let marks, let values = cursorValues else {
            guard let bracket = first.bracket else { return [segment([], byValue)] }
            return brackets.map { segment(["\(bracket) = \($0)"], byValue) }
        }
        let n = first.expressions.count
        var same: [String] = []
        if let bracket = first.bracket { same.append("\(bracket) = \(marks[0])") }
        let tie = values[n - 1] == .null ? "\(first.value) IS NULL" : "\(first.value) = \(marks[n - 1])"
        var segments = [segment(same + [tie, ListPlan.after(rest, Array(marks[n...]))], ListPlan.orderBy(rest))]
        if values[n - 1] != .null {
            segments.append(segment(same + ["\(first.value) \(first.ascending ? ">" : "<") \(marks[n - 1])"], byValue))
        }
        if let bracket = first.bracket, case .int(let current) = values[0] {
            for b in brackets where first.ascending ? b > current : b < current {
                segments.append(segment(["\(bracket) = \(b)"], byValue))
            }
        }
        return segments
    }
}
