import HTTP
import Hooks
import JSON
import Logging
import Scripts
import Store

/// roost.* data calls inside the writer's transaction (a before hook): reads
/// see the transaction's writes so far; writes take the same path as a
/// client's (`CollectionWrite`: access, preconditions, hooks, feed, outbox,
/// references), with the caller's rights unless `roost.as_system`.
final class WriterScriptServices: ScriptServices {
    let writer: any DocumentWriting
    let hooks: HookServices
    let access: AccessPolicy
    let principal: AccessScope.Principal
    /// The principal's role names.
    let roles: [String]
    let requestID: String
    let logger: Logger
    /// Where the writes' after hooks wait for COMMIT (a nested write's are dropped, as for built-in hooks' writes).
    let pending: HookServices.Pending
    private var reader: (any DocumentReading)?

    init(writer: any DocumentWriting, hooks: HookServices, access: AccessPolicy, principal: AccessScope.Principal, roles: [String],
         requestID: String, pending: HookServices.Pending = HookServices.Pending([]), logger: Logger) {
        self.pending = pending
        self.writer = writer
        self.hooks = hooks
        self.access = access
        self.principal = principal
        self.roles = roles
        self.requestID = requestID
        self.logger = logger
    }

    /// Never inside the writer's transaction.
    var allowsHTTP: Bool { false }

    func scope(_ collection: String, _ system: Bool) -> AccessScope {
        system ? .system : access.scope(principal, roles: roles, in: collection)
    }

    private func transactionReader() throws -> any DocumentReading {
        if let reader { return reader }
        let made = try writer.readerInTransaction()
        reader = made
        return made
    }

    func get(_ collection: String, _ id: String, system: Bool) throws -> JSONValue? {
        try answering {
            try ScriptReads.get(try transactionReader(), access, collection, id, system ? .admin : principal, system ? [] : roles)
        }
    }

    func find(_ collection: String, filter: JSONValue, sort: JSONValue?, limit: Int, system: Bool) throws -> [JSONValue] {
        try answering {
            try ScriptReads.find(try transactionReader(), access, collection, filter: filter, sort: sort, limit: limit,
                                 system ? .admin : principal, system ? [] : roles)
        }
    }

    func count(_ collection: String, filter: JSONValue, system: Bool) throws -> Int {
        try answering { try ScriptReads.count(try transactionReader(), access, collection, filter: filter, system ? .admin : principal, system ? [] : roles) }
    }

    func create(_ collection: String, _ entity: JSONObject, system: Bool) throws -> JSONValue {
        try write(.create, collection, id: nil, entity, system)
    }

    func update(_ collection: String, _ id: String, _ patch: JSONObject, system: Bool) throws -> JSONValue {
        try write(.patch, collection, id: id, patch, system)
    }

    func delete(_ collection: String, _ id: String, system: Bool) throws {
        _ = try write(.delete, collection, id: id, JSONObject(), system)
    }

    /// Already inside the request's transaction.
    func transaction(_ body: () throws -> Void) throws { try body() }

    func webhook(_ event: String, _ data: JSONValue) throws {
        try answering {
            try ScriptOutbox.webhook(writer, event, data)
            hooks.outboxDirty.set(true)
        }
    }

    func push(_ userID: String, _ notification: JSONObject) throws {
        try answering {
            try ScriptOutbox.push(writer, userID, notification)
            hooks.outboxDirty.set(true)
        }
    }

    /// One write through `CollectionWrite`, as a client's request would make it.
    private func write(_ kind: CollectionWrite.Kind, _ collection: String, id: String?, _ entity: JSONObject, _ system: Bool) throws -> JSONValue {
        try answering {
            guard CollectionName.isValid(collection) || collection == AccessPolicy.usersCollection else {
                throw HTTPError(.invalidCollectionName, "\"\(collection)\" is not a collection scripts can write.")
            }
            guard collection != AccessPolicy.usersCollection && collection != FileHandlers.collection else {
                throw HTTPError(.forbidden, "Scripts change users and files through their own APIs, not roost.\(kind).")
            }
            let request = Request(method: kind == .create ? .post : (kind == .delete ? .delete : .patch), path: "/\(collection)",
                                  segments: [collection], query: [:], headers: Headers(), body: [], requestID: requestID)
            let write = CollectionWrite(kind: kind, collection: collection, id: id, request: request, body: nil,
                                        entity: kind == .delete ? nil : entity)
            let scope = self.scope(collection, system)
            try write.checkAccess(scope, access)
            let response = try write.apply(write.prepared(scope), hooks: hooks, access: access, writer: writer, pending: pending)
            reader = nil
            return (try? JSONParser.parse(response.body)) ?? .null
        }
    }

    /// Runs `body`, turning its error into what the script sees and what the client gets if the script lets it through.
    func answering<T>(_ body: () throws -> T) throws -> T {
        do { return try body() } catch let failure as ScriptServiceError { throw failure } catch {
            throw ScriptServiceError.from(error, requestID: requestID, logger: logger)
        }
    }
}

extension ScriptServiceError {
    /// The script's view of a store or hook error, keeping the error to answer with.
    static func from(_ error: any Error, requestID: String, logger: Logger) -> ScriptServiceError {
        let request = Request(method: .get, path: "/", segments: [], query: [:], headers: Headers(), body: [], requestID: requestID)
        let http = ErrorResponses.httpError(for: error, request, logger)
        return ScriptServiceError(status: http.status, code: http.code, message: http.description, underlying: error)
    }
}
