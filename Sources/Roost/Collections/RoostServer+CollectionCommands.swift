import Foundation
import JSON
import Store
import StoreSQLite
import Yams

extension RoostServer {
    /// `roostd export-collections`: the collections set up at run time as
    /// the config file's `collections:` mapping, so a team can move them into
    /// git (a collection the config names is then managed by it). Read on a
    /// read-only connection; the daemon may be running.
    public static func exportCollections(config: RoostConfig) throws -> String {
        guard let reader = try openExistingReader(config, role: "export-collections") else { return "collections: {}\n" }
        var collections: [String: Any] = [:]
        for record in try reader.collectionSettings() where record.settings != nil && config.collections[record.name] == nil {
            collections[record.name] = try RuntimeCollection(record).json.plainValue
        }
        let header = "# Collections set up at run time (roostd export-collections, \(Timestamp.now())).\n"
            + "# Under the config file's collections:, each is managed by the config from the next start or SIGHUP.\n"
        return header + (try Yams.dump(object: ["collections": collections], sortKeys: true))
    }

    /// `roostd check-schema [collection…]`: every stored document that fails
    /// its collection's schema (the config's or one set up at run time), one
    /// line per violation: `collection/id pointer: message (keyword)`.
    public static func checkSchemas(config: RoostConfig, only: [String]) throws -> [String] {
        guard let reader = try openExistingReader(config, role: "check-schema") else { return [] }
        let settings = ReloadableSettings(config)
        try CollectionSettingsSync.load(reader, into: settings, logger: .init(label: "check-schema"))
        var lines: [String] = []
        for (name, schema) in settings.snapshot.schemas.sorted(by: { $0.key < $1.key }) where only.isEmpty || only.contains(name) {
            var after: String?
            repeat {
                let report = try SchemaReport.check(reader, name, schema.compiled, after: after, scan: SchemaReport.pageRows)
                for failing in report.failing {
                    for v in failing.violations {
                        lines.append("\(name)/\(failing.id) \(v.instancePointer.isEmpty ? "/" : v.instancePointer): \(v.message) (\(v.keyword))")
                    }
                }
                after = report.next
            } while after != nil
        }
        return lines
    }

    /// A reader on the configured database, or nil when a SQLite data directory has no database yet.
    static func openExistingReader(_ config: RoostConfig, role: String) throws -> (any DocumentReading)? {
        let engine = try config.storeEngine()
        if let sqlite = engine as? SQLiteEngine, !FileManager.default.fileExists(atPath: sqlite.path) { return nil }
        return try engine.openReader(role: role)
    }
}
