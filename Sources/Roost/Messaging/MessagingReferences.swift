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
            throw HTTPError(.invalidQuery, "resolve takes a comma-separated list of at most \(maxFields) top-level field names.")
        }
        return names
    }

    /// What one response may expand at most (`Budget`).
    static let maxTargets = 1000
    static let maxExpansions = 10_000
    static let maxAddedBytes = 8 << 20
    static let maxSeconds = 1.0

    /// The bound on one response's expansions, counted over all its
    /// documents and fields: distinct targets read, references expanded
    /// (repeats of one target too), bytes added and time spent. Past any of
    /// them the remaining references stay references and the response says
    /// so (`X-Roost-Resolve: truncated`): one request cannot grow an answer
    /// without bound or hold a reader past its time slice.
    struct Budget {
        var targets = 0, expansions = 0, bytes = 0
        let deadline = ContinuousClock.now + .milliseconds(Int(maxSeconds * 1000))
        var truncated = false

        /// Takes room for one expansion of `size` bytes; false (and truncated) when none is left.
        mutating func take(bytes size: Int) -> Bool {
            guard !truncated else { return false }
            guard expansions < References.maxExpansions, bytes + size <= References.maxAddedBytes, ContinuousClock.now < deadline else {
                truncated = true
                return false
            }
            expansions += 1
            bytes += size
            return true
        }

        /// True when `size` more bytes fit (else truncated).
        mutating func fits(bytes size: Int) -> Bool {
            if bytes + size > References.maxAddedBytes { truncated = true }
            return !truncated
        }

        /// Takes room for one read of a target not read before.
        mutating func takeRead() -> Bool {
            guard !truncated, targets < References.maxTargets else { truncated = true; return false }
            targets += 1
            return true
        }
    }

    /// The documents with references in `fields` expanded where the caller
    /// may read the target, within one `Budget`; `truncated` when it ran out.
    static func resolve(_ documents: [String], fields: [String], as caller: AccessScope,
                        access: AccessPolicy, reader: any DocumentsReading) throws -> (documents: [String], truncated: Bool) {
        let principal = caller.principal
        var cache: [String: (value: JSONValue, size: Int)?] = [:]
        var budget = Budget()
        func target(_ ref: JSONObject) throws -> JSONValue? {
            guard ref["_type"] == .string("ref"), case .string(let collection)? = ref["_collection"],
                  case .string(let id)? = ref["_id"], CollectionName.isWellFormed(collection) else { return nil }
            let key = collection + "\u{0}" + id
            let found: (value: JSONValue, size: Int)?
            if let hit = cache[key] {
                found = hit
            } else {
                guard budget.takeRead() else { return nil }
                let scope = access.scope(principal, roles: caller.roles, in: collection)
                var read: (JSONValue, Int)?
                if (try? scope.checkCollectionRead()) != nil,
                   let text = try reader.get(collection, id: id, scope: scope, redaction: access.redaction(collection, principal)) {
                    // Too large for what is left: not even parsed.
                    guard budget.fits(bytes: text.utf8.count) else { return nil }
                    if let value = try? JSONParser.parse(text) { read = (value, text.utf8.count) }
                }
                cache[key] = read
                found = read
            }
            guard let found, budget.take(bytes: found.size) else { return nil }
            return found.value
        }
        func expand(_ value: JSONValue) throws -> JSONValue {
            switch value {
            case .object(let o): return try target(o) ?? value
            case .array(let items): return .array(try items.map { item in
                if !budget.truncated, case .object(let o) = item { return try target(o) ?? item }
                return item
            })
            default: return value
            }
        }
        let expanded = try documents.map { text in
            guard !budget.truncated, case .object(var document) = try JSONParser.parse(text) else { return text }
            var changed = false
            for field in fields {
                guard let value = document[field] else { continue }
                let expanded = try expand(value)
                if expanded != value { document[field] = expanded; changed = true }
            }
            return changed ? document.jsonText : text
        }
        return (expanded, budget.truncated)
    }

    /// Marks a response whose references were not all expanded.
    static func mark(_ response: inout Response, truncated: Bool) {
        if truncated { response.headers.add("X-Roost-Resolve", "truncated") }
    }
}
