import HTTP
import Hooks
import JSON
import Jobs
import Store

/// One write to a collection in its two steps, the same for a single
/// request and for each operation of a `POST /_batch`:
///
/// 1. `prepare`, on a reader thread with the caller the job seam found: that they may write
///    to the collection at all, and the parsed body. A refused or malformed
///    write never takes a writer slot.
/// 2. `apply`, in the writer's transaction: the row is read once and the
///    caller's access to it checked (404/403) before any hook sees it, then
///    `If-Match`/`If-None-Match`, then the before hooks around the write
///    (which also records its change-feed position). A delete first plans
///    what its declared references do (`ReferentialDelete`).
struct CollectionWrite: Sendable {
    enum Kind: String, Sendable { case create, replace, patch, delete }

    let kind: Kind
    let collection: String
    let id: String?
    let request: Request
    /// The raw JSON body (nil for a delete, or when `entity` is given).
    let body: [UInt8]?
    /// An already parsed body (batch operations).
    var entity: JSONObject? = nil

    struct Prepared: Sendable {
        let scope: AccessScope
        let entity: JSONObject
    }

    /// The entity this write changes (collection NUL id), when it is known
    /// before it runs: the path's id, or a create's own `_id`.
    func entityKey(_ prepared: Prepared) -> String? {
        guard let id = id ?? prepared.entity["_id"]?.stringValue else { return nil }
        return collection + "\u{0}" + id
    }

    /// Bodies up to this size from callers with no credentials are parsed in
    /// the writer's job (their access needs no look-up); larger ones on a reader.
    static let inlineBodyLimit = 64 * 1024

    func prepare(_ caller: Authenticator.Caller, _ access: AccessPolicy) throws -> Prepared {
        let scope = access.scope(caller, in: collection)
        try checkAccess(scope, access)
        return try prepared(scope)
    }

    /// What the caller may do to the collection at all, before any body is parsed.
    func checkAccess(_ scope: AccessScope, _ access: AccessPolicy) throws {
        if kind == .create { try scope.checkCreate() } else { try scope.checkCollectionRead() }
        try access.checkClientWrite(collection, scope.principal)
    }

    func prepared(_ scope: AccessScope) throws -> Prepared {
        Prepared(scope: scope, entity: try entity ?? body.map(CollectionHandlers.object) ?? JSONObject())
    }

    func apply(_ prepared: Prepared, hooks: HookServices, access: AccessPolicy, writer: any DocumentWriting,
               pending: HookServices.Pending) throws -> Response {
        let (scope, entity) = (prepared.scope, prepared.entity)
        switch kind {
        case .create:
            try access.checkMayCreate(collection, writer)
            try Preconditions.check(request, current: nil)
            let text = try hooks.run(.beforeCreate, collection, id: nil, entity: entity, requestID: request.requestID,
                                     scope: scope, writer: writer, pending: pending) { entity in
                try writer.insert(into: collection, entity, scope: scope)
            }
            return Preconditions.entityResponse(201, text)
        case .replace:
            let id = self.id!
            let existing = try writer.replaceableRow(in: collection, id: id, scope: scope)
            if existing == nil { try access.checkMayCreate(collection, writer) }
            try Preconditions.check(request, current: existing?.document)
            var created = false
            let text = try hooks.run(existing == nil ? .beforeCreate : .beforeUpdate, collection, id: id, entity: entity,
                                     previous: existing?.document, requestID: request.requestID, scope: scope, writer: writer,
                                     pending: pending) { entity in
                let result = try writer.replace(in: collection, id: id, entity, existing: existing, scope: scope)
                created = result.created
                return result.text
            }
            return Preconditions.entityResponse(created ? 201 : 200, text)
        case .patch:
            let id = self.id!
            guard let existing = try writer.existingRow(in: collection, id: id, scope: scope) else { throw notFound(id) }
            try Preconditions.check(request, current: existing.document)
            let text = try hooks.run(.beforeUpdate, collection, id: id, entity: entity, isPatch: true, previous: existing.document,
                                     requestID: request.requestID, scope: scope, writer: writer, pending: pending) { patch in
                try writer.patch(in: collection, id: id, patch, existing: existing, scope: scope)
            }
            return Preconditions.entityResponse(200, text)
        case .delete:
            let id = self.id!
            guard let existing = try writer.existingRow(in: collection, id: id, scope: scope) else { throw notFound(id) }
            try Preconditions.check(request, current: existing.document)
            let cascade = try ReferentialDelete.plan(collection, id: id, writer: writer, revealCounts: scope.principal == .admin)
            _ = try hooks.run(.beforeDelete, collection, id: id, entity: existing.document, previous: existing.document,
                              requestID: request.requestID, scope: scope, writer: writer, pending: pending) { _ in
                try ReferentialDelete.run(cascade, hooks: hooks, writer: writer, pending: pending, requestID: request.requestID) {
                    try writer.delete(from: collection, id: id, existing: existing, scope: scope)
                }
                return existing.document.jsonText
            }
            return .json(200, "{\"count\":1}")
        }
    }

    private func notFound(_ id: String) -> HTTPError {
        HTTPError.notFound("No document with _id \"\(id)\" in \(collection).")
    }
}
