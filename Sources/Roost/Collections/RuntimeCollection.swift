import Foundation
import JSON
import Store

/// The settings of a collection set up at run time (`/admin/collections`,
/// docs/COLLECTIONS.md), read with the very parser the config file's
/// `collections:` entries go through, so both accept and refuse the same.
struct RuntimeCollection: Sendable {
    /// What the admin API takes; `push_sync` stays in the config file (it needs a restart).
    static let keys = ["permission", "indexes", "references", "rules", "schema", "on_user_delete"]

    let name: String
    /// The settings as stored: a JSON object with `keys` only, keys sorted.
    let settings: JSONObject
    let collection: RoostConfig.Collection
    let version: Int64
    let updatedAt: String

    /// Checks `settings` as the config file's entry for `name` would be.
    /// - Throws: `RoostConfig.Invalid` naming the failing setting.
    static func parse(_ name: String, _ settings: JSONObject) throws -> RoostConfig.Collection {
        for key in settings.keys where !keys.contains(key) {
            throw RoostConfig.Invalid("collections.\(name): unknown setting \"\(key)\" (use \(keys.joined(separator: ", ")))")
        }
        var plain: [String: Any] = [:]
        for (key, value) in settings where value != .null { plain[key] = value.plainValue }
        return try RoostConfig.collection(name, plain)
    }

    init(_ record: CollectionSettingsRecord) throws {
        guard let text = record.settings, case .object(let settings) = try JSONParser.parse(text) else {
            throw RoostConfig.Invalid("collections.\(record.name): the stored settings are not a JSON object")
        }
        name = record.name
        self.settings = settings
        collection = try Self.parse(record.name, settings)
        version = record.version
        updatedAt = record.updatedAt
    }

    /// The settings as JSON, for the admin API and `export-collections`.
    var json: JSONValue { .object(settings) }
}

extension JSONValue {
    /// The value as the YAML reader hands the config's parsers: Swift
    /// strings, numbers, booleans, arrays, dictionaries and `NSNull`.
    var plainValue: Any {
        switch self {
        case .null: return NSNull()
        case .bool(let b): return b
        case .int(let i): return Int(i)
        case .double(let d): return d
        case .string(let s): return s
        case .array(let a): return a.map(\.plainValue)
        case .object(let o):
            var map: [String: Any] = [:]
            for (k, v) in o { map[k] = v.plainValue }
            return map
        }
    }
}
