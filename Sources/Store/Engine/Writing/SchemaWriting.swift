import Schema

/// The declared indexes and references, and the `_refs` rows every write keeps in step.
public protocol SchemaWriting: AnyObject {
    /// The declared reference fields whose `_refs` rows every write keeps in step.
    var references: ReferenceSchema { get }
    func applyIndexes(_ specs: Set<IndexSpec>, on collection: String) throws
    func applyReferences(_ schema: ReferenceSchema) throws
    /// Whether `collection` holds or has held documents (its table exists).
    func collectionExists(_ collection: String) throws -> Bool
    func referrerCounts(to collection: String, id: String) throws -> [(collection: String, field: String, count: Int)]
    func referrers(to collection: String, id: String, from: String, field: String) throws -> [String]
    func deferringReferenceChecks<T>(_ body: () throws -> T) throws -> T
    func danglingReferences() throws -> [DanglingReference]
    /// Each collection's read-rule stamp, for every row written from now on
    /// (`RuleStamp`; engines that do not keep stamps ignore it).
    func useRuleStamps(_ stamps: @escaping @Sendable (String) -> RuleStamp?)
    /// Each collection's JSON Schema, checked on every document written from now on (`SchemaCheck`).
    func useSchemas(_ schemas: @escaping @Sendable (String) -> JSONSchema?)
    /// Each collection's declared geo-indexed paths, checked as points (`GeoPointCheck`) on every
    /// document written from now on, besides those of the indexes already built: a write right
    /// after an index is declared, while it is built, is checked too.
    func useDeclaredGeoPaths(_ paths: @escaping @Sendable (String) -> [String])
    /// Stamps up to `limit` rows written under another stamp. - Returns: true when more may remain.
    func restampRows(limit: Int) throws -> Bool
}

/// Indexes built and dropped while Roost runs (collections set up at run
/// time), in bounded steps that never hold the writer for long.
public protocol IndexBuilding: AnyObject {
    /// One step toward `specs` being exactly `collection`'s indexes: starts
    /// new builds, fills up to `rows` documents of one, finishes or drops.
    /// - Parameter dropGrace: seconds a dropped index is kept for reads that began before.
    func buildIndexesStep(_ specs: Set<IndexSpec>, on collection: String, rows: Int, dropGrace: Double) throws -> IndexBuildProgress
}
