import Foundation
import JSON
import Logging
import Store
import StoreSQLite

/// Parses JSON text written in a test; a typo in a test is a programming error.
func json(_ text: String) -> JSONValue {
    do { return try JSONParser.parse(text) } catch { fatalError("bad JSON in test: \(error): \(text)") }
}

func object(_ text: String) -> JSONObject {
    guard case .object(let o) = json(text) else { fatalError("not a JSON object: \(text)") }
    return o
}

/// One SQLite file in a fresh temporary directory, with a migrated writer and a reader.
final class TestStore {
    let directory: URL
    let path: String
    let writer: DocumentWriter
    let reader: DocumentReader

    init() throws {
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("roost-store-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        path = directory.appendingPathComponent("store.sqlite").path
        writer = try DocumentWriter(path: path, ids: DocumentID(), logger: Logger(label: "test"))
        try writer.migrate()
        reader = try DocumentReader(path: path)
    }

    deinit { try? FileManager.default.removeItem(at: directory) }

    func insert(_ collection: String, _ documents: [String]) throws {
        try insert(collection, documents.map(object))
    }

    /// Accounts with these ids (username = id): `_acl` entries must name existing users.
    func users(_ ids: [String]) throws {
        let operations: [(DocumentWriter) throws -> Void] = ids.map { id in
            { writer in try writer.addCredentials(userID: id, username: id, passwordHash: "") }
        }
        for result in writer.commitBatch(operations) { _ = try result.get() }
    }

    /// Roles with these names: `_acl` entries `role:<name>` must name existing roles.
    func roles(_ names: [String]) throws {
        let operations: [(DocumentWriter) throws -> Bool] = try names.map { name in
            let role = try RoleName.parse(name)
            return { writer in try writer.createRole(role) }
        }
        for result in writer.commitBatch(operations) { _ = try result.get() }
    }

    func insert(_ collection: String, _ documents: [JSONObject]) throws {
        let operations: [(DocumentWriter) throws -> String] = documents.map { document in
            { writer in try writer.insert(into: collection, document) }
        }
        for result in writer.commitBatch(operations) { _ = try result.get() }
    }

    /// Declares value indexes on `paths` (and `name:geo` forms) for `collection`.
    func index(_ collection: String, _ specs: [String]) throws {
        var set: Set<IndexSpec> = []
        for spec in specs { set.insert(try IndexSpec(parsing: spec)) }
        try writer.applyIndexes(set, on: collection)
    }

    func find(_ collection: String, _ filter: String, sort: [(field: String, ascending: Bool)] = [],
              limit: Int = 1000, skip: Int = 0, fields: [String]? = nil) throws -> [JSONObject] {
        try reader.find(collection, FindQuery(filter: json(filter), sort: sort, limit: limit, skip: skip, fields: fields))
            .map(object)
    }

    /// The `_id`s of the matching documents, in result order.
    func ids(_ collection: String, _ filter: String, sort: [(field: String, ascending: Bool)] = []) throws -> [String] {
        try find(collection, filter, sort: sort).map { $0["_id"]?.stringValue ?? "?" }
    }

    func idSet(_ collection: String, _ filter: JSONValue) throws -> Set<String> {
        Set(try reader.find(collection, FindQuery(filter: filter, limit: FindQuery.maxLimit)).map { object($0)["_id"]?.stringValue ?? "?" })
    }

    /// The error a filter raises, or nil when it compiles and runs.
    func queryError(_ collection: String, _ filter: JSONValue) -> QueryError? {
        do {
            _ = try reader.find(collection, FindQuery(filter: filter))
            return nil
        } catch let error as QueryError {
            return error
        } catch {
            return QueryError.invalid("unexpected non-QueryError: \(error)")
        }
    }
}

