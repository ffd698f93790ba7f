/// Where one collection's rows and index entries live, and which of its
/// fields are indexed. Collections map to numbered tables, so a collection
/// name never becomes SQL text.
public struct CollectionLayout: Sendable, Equatable {
    public let name: String
    public let tableID: Int64
    /// Dotted paths with a multikey value index (`x_N`).
    public let indexedPaths: Set<String>
    /// Dotted paths of points, each with its R*Tree table (`g_N_M`).
    public let geoTables: [String: String]
    /// What every write keeps up to date: the indexes above, and those still
    /// being built or about to be dropped, which no read may use yet or still.
    public let maintainedPaths: Set<String>
    public let maintainedGeoTables: [String: String]

    public init(name: String, tableID: Int64, indexedPaths: Set<String> = [], geoTables: [String: String] = [:],
                maintainedPaths: Set<String>? = nil, maintainedGeoTables: [String: String]? = nil) {
        self.name = name
        self.tableID = tableID
        self.indexedPaths = indexedPaths
        self.geoTables = geoTables
        self.maintainedPaths = maintainedPaths ?? indexedPaths
        self.maintainedGeoTables = maintainedGeoTables ?? geoTables
    }

    public var table: String { "c_\(tableID)" }
    public var indexTable: String { "x_\(tableID)" }
    /// Who may read each row of a private collection: `(uid, rid)` for the
    /// creator and every user in `_acl.read` or `_acl.write`.
    public var aclTable: String { "a_\(tableID)" }

    /// The points table beside R*Tree `geoTable` (`g_N_M` → `gp_N_M`): each
    /// row's exact point in row order, `(rid, x, y)`, so an unsorted
    /// `$geoWithin` page walks small rows in row order.
    public static func pointTable(_ geoTable: String) -> String { "gp" + geoTable.dropFirst() }
}
