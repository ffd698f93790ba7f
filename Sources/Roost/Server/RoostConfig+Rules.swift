import Foundation
import JSON
import Store

/// `collections.<name>.rules` (docs/RULES.md): each operation's filter,
/// read from YAML (a mapping, or a JSON string) into the `JSONValue` the
/// query language reads, and checked when the config is read, so a rule
/// that does not compile stops start-up, a SIGHUP and `roostd check-config`
/// with its place in the message.
extension RoostConfig {
    static func rules(_ collection: String, _ value: Any) throws -> CollectionRules {
        let place = "collections.\(collection).rules"
        var json: JSONValue
        if let text = value as? String {
            do { json = try JSONParser.parse(text) } catch { throw Invalid("\(place) is not valid JSON: \(error)") }
        } else {
            json = try jsonValue(value, at: place)
        }
        // Each operation may be written as a JSON string too.
        if case .object(var operations) = json {
            for (key, member) in operations {
                guard case .string(let text) = member else { continue }
                do { operations[key] = try JSONParser.parse(text) } catch { throw Invalid("\(place).\(key) is not valid JSON: \(error)") }
            }
            json = .object(operations)
        }
        do { return try CollectionRules(json, at: place) } catch { throw Invalid(error.description) }
    }

    /// A YAML value as JSON. Mapping keys are sorted, so every node reads
    /// the same rule text (its fingerprint is part of sync cursors).
    static func jsonValue(_ value: Any, at place: String) throws -> JSONValue {
        switch value {
        case is NSNull: return .null
        case let b as Bool: return .bool(b)
        case let i as Int: return .int(Int64(i))
        case let d as Double: return .double(d)
        case let s as String: return .string(s)
        case let list as [Any]: return .array(try list.map { try jsonValue($0, at: place) })
        case let map as [String: Any]:
            var object = JSONObject()
            for key in map.keys.sorted() { object[key] = try jsonValue(map[key]!, at: "\(place).\(key)") }
            return .object(object)
        default:
            throw Invalid("\(place): \(value) is not a JSON value (use strings, numbers, booleans, lists and mappings).")
        }
    }
}
