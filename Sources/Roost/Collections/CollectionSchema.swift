import JSON
import Schema

/// `collections.<name>.schema` (docs/SCHEMAS.md): a JSON Schema, written as a
/// YAML mapping or a JSON string, compiled when the config is read, so a
/// schema Roost cannot use stops start-up, a SIGHUP and `roostd
/// check-config` with its place and the failing keyword's pointer.
public struct CollectionSchema: Sendable {
    /// The schema as written (keys sorted), for `check-config` and reload diffs.
    public let source: JSONValue
    public let compiled: JSONSchema

    static func read(_ collection: String, _ value: Any) throws -> CollectionSchema {
        let place = "collections.\(collection).schema"
        var json: JSONValue
        if let text = value as? String {
            do { json = try JSONParser.parse(text) } catch { throw RoostConfig.Invalid("\(place) is not valid JSON: \(error)") }
        } else {
            json = try RoostConfig.jsonValue(value, at: place)
        }
        do {
            return CollectionSchema(source: json, compiled: try JSONSchema(json))
        } catch {
            throw RoostConfig.Invalid("\(place): \(error)")
        }
    }
}
