import JSON

/// Documents: get, find, list, count and the query plans, access rules inside the SQL.
public protocol DocumentsReading: AnyObject {
    func get(_ collection: String, id: String, scope: AccessScope, redaction: Redaction?) throws -> String?
    func find(_ collection: String, _ query: FindQuery, scope: AccessScope, redaction: Redaction?) throws -> [String]
    func page(_ collection: String, _ query: FindQuery, withTotal: Bool, scope: AccessScope, redaction: Redaction?) throws -> ListPage
    func count(_ collection: String, filter: JSONValue, scope: AccessScope) throws -> Int
    func explain(_ collection: String, _ query: FindQuery, scope: AccessScope) throws -> JSONValue
    func plan(_ collection: String, filter: JSONValue) throws -> [String]
}

extension DocumentsReading {
    public func get(_ collection: String, id: String, scope: AccessScope = .system) throws -> String? {
        try get(collection, id: id, scope: scope, redaction: nil)
    }

    public func find(_ collection: String, _ query: FindQuery, scope: AccessScope = .system) throws -> [String] {
        try find(collection, query, scope: scope, redaction: nil)
    }

    public func page(_ collection: String, _ query: FindQuery, withTotal: Bool, scope: AccessScope = .system) throws -> ListPage {
        try page(collection, query, withTotal: withTotal, scope: scope, redaction: nil)
    }

    public func count(_ collection: String, filter: JSONValue) throws -> Int {
        try count(collection, filter: filter, scope: .system)
    }
}
