/// One page of a list: the documents' JSON texts in order, the `after`
/// cursor of the next page (when this one is full), and the total when asked.
public struct ListPage: Sendable {
    public var documents: [String]
    public var next: String?
    public var total: Int?
    /// A nearest-first page's distance of each document, in metres, when the engine
    /// measured them while ordering the page (`NearDistance.appended`); nil otherwise.
    public var distances: [Double]?

    public init(documents: [String], next: String? = nil, total: Int? = nil, distances: [Double]? = nil) {
        self.documents = documents
        self.next = next
        self.total = total
        self.distances = distances
    }
}
