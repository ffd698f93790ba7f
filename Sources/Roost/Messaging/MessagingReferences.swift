import HTTP
import JSON
import Store

/// `?resolve=lastMessage,author`: expands references stored as
/// `{"_type":"ref","_collection":"messages","_id":"…"}` (or arrays of them)
/// in the named top-level fields, one level deep.
///
/// Each reference is fetched with a scoped get under the reader's own
/// access rights (their `AccessScope` for the referenced collection and its
/// redaction), so a reference to a row the reader may not see stays an
/// unexpanded reference and reveals nothing more than the id it already held.
enum References {
    static let maxFields = 16

    /// The fields named by `resolve`, or nil when absent.
    static func fields(_ request: Request) throws -> [String]? {
        guard let raw = request.query["resolve"] else { return nil }
        let names = raw.split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        guard !names.isEmpty, names.count <= maxFields,
              names.allSatisfy({ !$0.hasPrefix("$") && !$0.contains(".") && $0.utf8.count <= 256 }) else {
            throw HTTPError(400, "InvalidQuery", "resolve takes a comma-separated list of at most \(maxFields) top-level field names.")
        }
        return names
    }

    /// The documents with references in `fields` expanded where the caller may read the target.
    static func resolve(_ documents: [String], fields: [String], principal: AccessScope.Principal,
                        access: AccessPolicy, reader: any DocumentReading) throws -> [String] {
        var cache: [String: JSONValue?] = [:]
        func target(_ ref: JSONObject) throws -> JSONValue? {
            guard ref["_type"] == .string("ref"), case .string(let collection)? = ref["_collection"],
                  case .string(let id)? = ref["_id"], CollectionName.isWellFormed(collection) else { return nil }
            let key = collection + "\u{0}" + id
            if let hit = cache[key] { return hit }
            let scope = AccessScope(principal: principal, level: access.level(of: collection))
            var found: JSONValue?
            if (try? scope.checkCollectionRead()) != nil,
               let text = try reader.get(collection, id: id, scope: scope, redaction: access.redaction(collection, principal)) {
                found = try? JSONParser.parse(text)
            }
            cache[key] = found
            return found
        }
        func expand(_ value: JSONValue) throws -> JSONValue {
            switch value {
            case .object(let o): return try target(o) ?? value
            case .array(let items): return .array(try items.map { item in
                if case .object(let o) = item { return try target(o) ?? item }
                return item
            })
            default: return value
            }
        }
        return try documents.map { text in
            guard case .object(var document) = try JSONParser.parse(text) else { return text }
            var changed = false
            for field in fields {
                guard let value = document[field] else { continue }
                let expanded = try expand(value)
                if expanded != value { document[field] = expanded; changed = true }
            }
            return changed ? document.jsonText : text
        }
    }
}
