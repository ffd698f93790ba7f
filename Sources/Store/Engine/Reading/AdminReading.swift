/// What the admin API and console list: collections and dangling references.
public protocol AdminReading: AnyObject {
    func collectionSummaries() throws -> [(name: String, count: Int)]
    func collectionDetails() throws -> [CollectionDetail]
    func danglingReferences(_ schema: ReferenceSchema) throws -> [DanglingReference]
}
