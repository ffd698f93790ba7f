import HTTP
import JSON
import Store

/// What deleting a referenced entity does to the entities that reference it,
/// as the declared `on_delete` rules say, inside the delete's transaction.
///
/// `plan` walks `_refs` from the entity (and from every entity a cascade
/// reaches) before any hook runs: a `restrict` reference, or more entities
/// to touch than `references_max_cascade`, answers 409 and nothing changes.
/// `run` then nullifies and deletes through `HookServices.run`, the one
/// write path, so every touched entity fires its hooks and webhooks and gets
/// its change-feed row. Cascaded writes act as the system: they reach
/// entities the caller may not be able to see.
struct ReferentialDelete {
    struct Key: Hashable { let collection: String; let id: String }

    /// Entities deleted by the cascade, in the order they were reached.
    private(set) var deletes: [Key] = []
    /// Surviving entities: for each, the fields to clear of references to which deleted targets.
    private(set) var nullify: [Key: [String: Set<String>]] = [:]

    /// The cascade deleting `id` from `collection` sets off; nil when nothing references it.
    /// - Parameter revealCounts: whether a refusal may say how many entities
    ///   are involved (the admin's); others may not see all of them, so a
    ///   count would tell them about rows they cannot read.
    static func plan(_ collection: String, id: String, writer: any SchemaWriting, revealCounts: Bool) throws -> ReferentialDelete? {
        let schema = writer.references
        guard schema.isTarget(collection) else { return nil }
        let root = Key(collection: collection, id: id)
        var plan = ReferentialDelete()
        var deleting: Set<Key> = [root]
        var restricted: [(target: Key, from: String, field: String, count: Int)] = []
        var queue = [root], next = 0
        while next < queue.count {
            let target = queue[next]
            next += 1
            guard schema.isTarget(target.collection) else { continue }
            for (from, field, count) in try writer.referrerCounts(to: target.collection, id: target.id) {
                let mode = schema.field(from, field)?.onDelete ?? .restrict
                if mode == .restrict {
                    restricted.append((target, from, field, count))
                    continue
                }
                guard plan.deletes.count + plan.nullify.count + count <= 2 * schema.maxCascade else {
                    throw Self.tooMany(collection, id, atLeast: plan.deletes.count + plan.nullify.count + count, schema.maxCascade, revealCounts)
                }
                for referrer in try writer.referrers(to: target.collection, id: target.id, from: from, field: field) {
                    let key = Key(collection: from, id: referrer)
                    if mode == .nullify {
                        plan.nullify[key, default: [:]][field, default: []].insert(target.id)
                    } else if deleting.insert(key).inserted {
                        plan.deletes.append(key)
                        queue.append(key)
                    }
                }
            }
        }
        plan.nullify = plan.nullify.filter { !deleting.contains($0.key) }
        let blocking = try restricted.reduce(0) { sum, r in
            guard deleting.contains(where: { $0.collection == r.from }) else { return sum + r.count }
            return sum + (try writer.referrers(to: r.target.collection, id: r.target.id, from: r.from, field: r.field)
                .filter { !deleting.contains(Key(collection: r.from, id: $0)) }.count)
        }
        if blocking > 0 { throw ReferencedError(collection: collection, id: id, count: blocking, reveal: revealCounts) }
        let touched = plan.deletes.count + plan.nullify.count
        if touched > schema.maxCascade { throw Self.tooMany(collection, id, atLeast: touched, schema.maxCascade, revealCounts) }
        return plan
    }

    /// Deletes the root entity with `delete`, after the cascade's updates and
    /// deletes, then checks that nothing references a deleted entity.
    static func run(_ plan: ReferentialDelete?, hooks: HookServices, writer: any DocumentWriting, pending: HookServices.Pending,
                    requestID: String, delete: () throws -> Void) throws {
        guard let plan else { return try delete() }
        try writer.deferringReferenceChecks {
            for (key, fields) in plan.nullify.sorted(by: { ($0.key.collection, $0.key.id) < ($1.key.collection, $1.key.id) }) {
                guard let row = try writer.existingRow(in: key.collection, id: key.id, scope: .system) else { continue }
                var document = row.document
                for (field, targets) in fields { document[field] = Self.without(document[field], targets) }
                _ = try hooks.run(.beforeUpdate, key.collection, id: key.id, entity: document, previous: row.document,
                                  requestID: requestID, scope: .system, writer: writer, pending: pending) { entity in
                    try writer.replace(in: key.collection, id: key.id, entity, existing: row, scope: .system).text
                }
            }
            for key in plan.deletes.reversed() {
                guard let row = try writer.existingRow(in: key.collection, id: key.id, scope: .system) else { continue }
                _ = try hooks.run(.beforeDelete, key.collection, id: key.id, entity: row.document, previous: row.document,
                                  requestID: requestID, scope: .system, writer: writer, pending: pending) { _ in
                    try writer.delete(from: key.collection, id: key.id, existing: row, scope: .system)
                    return row.document.jsonText
                }
            }
            try delete()
        }
    }

    /// A field's value once references to `targets` are removed: an array
    /// loses those elements, a single reference becomes null.
    static func without(_ value: JSONValue?, _ targets: Set<String>) -> JSONValue {
        guard case .array(let items)? = value else { return .null }
        return .array(items.filter { item in
            guard case .object(let ref) = item, case .string(let id)? = ref["_id"] else { return true }
            return !targets.contains(id)
        })
    }

    static func tooMany(_ collection: String, _ id: String, atLeast count: Int, _ limit: Int, _ reveal: Bool) -> ReferencedError {
        ReferencedError(code: .cascadeTooLarge, collection: collection, id: id, count: count, limit: limit, reveal: reveal)
    }
}

/// 409 for a delete that references forbid (`Referenced`) or that would
/// touch more than `references_max_cascade` entities (`CascadeTooLarge`).
/// The body carries `count`: the references that block it, or the entities
/// the cascade would touch.
struct ReferencedError: HTTPErrorConvertible {
    var code = ErrorCode.referenced
    let collection: String
    let id: String
    let count: Int
    var limit: Int? = nil
    /// Whether the caller may learn `count` (the admin); for others it is
    /// left out, since it may count rows they cannot read.
    var reveal = true

    var httpError: HTTPError {
        let noun = count == 1 ? "entity" : "entities"
        var fields = JSONObject()
        if let limit { fields["limit"] = .int(Int64(limit)) }
        if reveal { fields["count"] = .int(Int64(count)) }
        let many = reveal ? "\(count) \(noun)" : "entities"
        let description = limit.map { limit in
            "Deleting \"\(id)\" from \(collection) would delete or change \(reveal ? many : "more entities") through references than references_max_cascade (\(limit)) allows; nothing was changed."
        } ?? "\"\(id)\" in \(collection) is referenced by \(many) whose reference restricts deletes; remove those references first."
        return HTTPError(code, description, fields: fields)
    }
}
