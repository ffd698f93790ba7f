import Store

/// Statistics after bulk loads (issue #42): `ANALYZE` of a collection table
/// each time this writer's creates in it double (1,000, 2,000, 4,000, …).
///
/// The planner reads a declared index's expressions' statistics, gathered
/// by `ANALYZE` only. Tables are analyzed when their indexes are built, at
/// start-up, often still empty; autovacuum analyzes them again only after
/// about a minute and 10% of rows changed. A collection loaded in bulk
/// after start would meanwhile be planned as nearly empty (an equality
/// estimated at 1 row where 5% match, a range's page sorted instead of
/// walked). Doubling keeps the work logarithmic in the rows created
/// (about 10 ANALYZEs on the way to 1M rows, each sampling at most 30,000
/// rows), and it runs after the batch's COMMIT on `PostgresAnalyzer`'s own
/// thread and connection, never on the writer's.
struct TableGrowth {
    /// Creates since start per table, and the count at which to analyze next.
    private var created: [String: (count: Int, next: Int)] = [:]
    /// Creates per table since `takeRecent` (the analyzer's quiet pass, `PostgresAnalyzer.grew`).
    private var recent: [String: Int] = [:]
    static let first = 1_000

    mutating func add(_ table: String) {
        created[table, default: (0, Self.first)].count += 1
        recent[table, default: 0] += 1
    }

    /// The creates per table since the last call, and since start.
    mutating func takeRecent() -> [String: (recent: Int, total: Int)] {
        defer { recent.removeAll(keepingCapacity: true) }
        return recent.reduce(into: [:]) { out, entry in out[entry.key] = (entry.value, created[entry.key]?.count ?? entry.value) }
    }

    /// Tables due for ANALYZE; each one's next is twice its count now.
    mutating func due() -> [String] {
        let tables = created.filter { $0.value.count >= $0.value.next }.map(\.key).sorted()
        for table in tables { created[table]!.next = created[table]!.count * 2 }
        return tables
    }
}

extension PostgresDocumentWriter {
    /// Hands the tables whose creates doubled since their last ANALYZE to
    /// the analyzer (after a commit); returns at once.
    func analyzeGrownTables() {
        analyzer.request(growth.due())
        analyzer.grew(growth.takeRecent())
    }
}
