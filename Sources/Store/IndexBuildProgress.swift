/// Where a collection's indexes stand while Roost builds or drops them in
/// the background (`SchemaWriting.buildIndexesStep`), for the admin API,
/// the console and metrics.
public struct IndexBuildProgress: Sendable, Equatable {
    public enum State: String, Sendable { case ready, building, dropping }

    public struct Entry: Sendable, Equatable {
        public let spec: IndexSpec
        public let state: State
        /// Rows done and rows in all while building (approximate on PostgreSQL: the server's own counters).
        public let rowsDone: Int64
        public let rowsTotal: Int64
        /// A ready value index whose sort order is built at the next start (SQLite, a big collection):
        /// filters use it now, sorted pages on its field sort their matches meanwhile.
        public let sortDeferred: Bool

        public init(spec: IndexSpec, state: State, rowsDone: Int64 = 0, rowsTotal: Int64 = 0, sortDeferred: Bool = false) {
            self.spec = spec
            self.state = state
            self.rowsDone = rowsDone
            self.rowsTotal = rowsTotal
            self.sortDeferred = sortDeferred
        }
    }

    public var entries: [Entry]
    /// Whether the step changed what reads may use (a layout to read again: `CatalogGeneration`).
    public var changedLayout: Bool
    /// Whether the indexes are exactly the wanted ones, all ready: no step is left.
    public var finished: Bool

    public init(entries: [Entry] = [], changedLayout: Bool = false, finished: Bool = true) {
        self.entries = entries
        self.changedLayout = changedLayout
        self.finished = finished
    }
}
