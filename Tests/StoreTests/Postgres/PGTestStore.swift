import Foundation
import JSON
import Logging
import RoostTestSupport
import Store
@testable import StorePostgres

/// A fresh database in the process's throwaway PostgreSQL, migrated, with a
/// writer and a reader: the PostgreSQL twin of `TestStore`.
final class PGTestStore {
    let url: String
    let writer: PostgresDocumentWriter
    let reader: PostgresDocumentReader

    init() throws {
        url = try ThrowawayPostgres.shared().database()
        writer = try PostgresDocumentWriter(url: url, ids: DocumentID(), logger: Logger(label: "test"))
        try writer.migrate()
        reader = try PostgresDocumentReader(url: url)
    }

    func insert(_ collection: String, _ documents: [String]) throws {
        try insert(collection, documents.map(object))
    }

    /// Accounts with these ids (username = id): `_acl` entries must name existing users.
    func users(_ ids: [String]) throws {
        let operations: [(PostgresDocumentWriter) throws -> Void] = ids.map { id in
            { writer in try writer.addCredentials(userID: id, username: id, passwordHash: "") }
        }
        for result in writer.commitBatch(operations) { _ = try result.get() }
    }

    /// Roles with these names: `_acl` entries `role:<name>` must name existing roles.
    func roles(_ names: [String]) throws {
        let operations: [(PostgresDocumentWriter) throws -> Bool] = try names.map { name in
            let role = try RoleName.parse(name)
            return { writer in try writer.createRole(role) }
        }
        for result in writer.commitBatch(operations) { _ = try result.get() }
    }

    func insert(_ collection: String, _ documents: [JSONObject], scope: AccessScope = .system) throws {
        let operations: [(PostgresDocumentWriter) throws -> String] = documents.map { document in
            { writer in try writer.insert(into: collection, document, scope: scope) }
        }
        for result in writer.commitBatch(operations) { _ = try result.get() }
    }

    func idSet(_ collection: String, _ filter: JSONValue, scope: AccessScope = .system) throws -> Set<String> {
        Set(try ids(collection, FindQuery(filter: filter, limit: FindQuery.maxLimit), scope: scope))
    }

    /// The `_id`s of a list's page, in order.
    func ids(_ collection: String, _ query: FindQuery, scope: AccessScope = .system) throws -> [String] {
        try reader.find(collection, query, scope: scope).map { object($0)["_id"]?.stringValue ?? "?" }
    }
}
