/// What the admin API and console list: collections and dangling references.
public protocol AdminReading: AnyObject {
    func collectionSummaries() throws -> [(name: String, count: Int)]
    /// Each collection's count and indexes; only `named`'s when given (one count, not every collection's).
    func collectionDetails(named: String?) throws -> [CollectionDetail]
    func danglingReferences(_ schema: ReferenceSchema) throws -> [DanglingReference]
}

extension AdminReading {
    public func collectionDetails() throws -> [CollectionDetail] { try collectionDetails(named: nil) }
}
