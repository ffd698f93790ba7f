import Synchronization

/// Counts changes to the collections' indexes in this process, so every
/// connection's cached layouts (`Catalog`, PostgreSQL's geo paths) are read
/// again after an index is built or dropped while Roost runs. One atomic
/// load per layout look-up; bumped after the change commits.
public enum CatalogGeneration {
    private static let counter = Atomic<Int>(0)

    public static var current: Int { counter.load(ordering: .acquiring) }

    /// Marks every cached layout out of date.
    public static func bump() { counter.add(1, ordering: .releasing) }
}
