/// A reader thread's connection itself: its time limit and memory.
public protocol ReaderConnection: AnyObject {
    /// The longest a list or count may run before it is stopped.
    var timeLimit: Double { get set }
    /// SQLite's page cache and memory map (no-ops on engines without them).
    func limitPageCache(bytes: Int) throws
    func mapFile(bytes: Int) throws
}
