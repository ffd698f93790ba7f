import Foundation
import Logging
import Store
import StoreSQLite

extension RoostServer {
    /// Installs the declared references on the writer (building `_refs` for
    /// new declarations) and logs the dangling references already stored: a
    /// count per collection, not a refusal to start.
    func applyReferences(_ writer: any SchemaWriting, settings: ReloadableSettings) throws {
        try writer.applyReferences(config.referenceSchema(collections: settings.collections, scope: Self.scope(settings)))
        let dangling = try writer.danglingReferences()
        for (collection, refs) in Dictionary(grouping: dangling, by: \.collection).sorted(by: { $0.key < $1.key }) {
            logger.warning("dangling references", metadata: [
                "collection": "\(collection)", "count": "\(refs.count)",
                "fields": "\(Set(refs.map(\.field)).sorted().joined(separator: ","))",
                "hint": "roostd check-references lists them",
            ])
        }
    }

    /// A caller's scope in a collection as `AccessPolicy` decides it (reloadable level and rules).
    static func scope(_ settings: ReloadableSettings) -> @Sendable (AccessScope.Principal, [String], String) -> AccessScope {
        { principal, roles, collection in
            let users = collection == AccessPolicy.usersCollection
            return AccessScope(principal: principal, level: users ? .shared : settings.permission(of: collection), roles: roles,
                               rules: settings.rules(of: collection))
        }
    }

    /// `roostd check-references`: every dangling reference of the declared
    /// fields, one per line (`collection/id field -> target/id`), read from
    /// the data directory on a read-only connection (the daemon may be running).
    public static func checkReferences(config: RoostConfig) throws -> [String] {
        guard let reader = try openExistingReader(config, role: "check-references") else { return [] }
        let schema = config.referenceSchema(scope: { principal, _, _ in AccessScope(principal: principal, level: .public) })
        return try reader.danglingReferences(schema).map { "\($0.collection)/\($0.id) \($0.field) -> \($0.target)/\($0.targetID)" }
    }
}
