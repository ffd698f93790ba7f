import Foundation
import HTTP
import Hooks
import JSON
import Jobs
import Logging
import Scripts
import Store

/// roost.* data calls from after hooks, functions and jobs, on a scripts
/// thread: reads on the thread's reader; each write is a transaction of
/// its own on the writer (waited for), unless `roost.transaction` groups
/// them, when the script's function runs inside one writer job.
final class WorkerScriptServices: ScriptServices {
    let scripts: RoostScripts
    let reader: any DocumentReading
    let principal: AccessScope.Principal
    /// The principal's role names.
    let roles: [String]
    let requestID: String
    /// Set while roost.transaction's function runs in the writer.
    private var inTransaction: WriterScriptServices?

    init(scripts: RoostScripts, reader: any DocumentReading, principal: AccessScope.Principal, roles: [String], requestID: String) {
        self.roles = roles
        self.scripts = scripts
        self.reader = reader
        self.principal = principal
        self.requestID = requestID
    }

    var allowsHTTP: Bool { inTransaction == nil }

    private func who(_ system: Bool) -> AccessScope.Principal { system ? .admin : principal }

    func get(_ collection: String, _ id: String, system: Bool) throws -> JSONValue? {
        if let inTransaction { return try inTransaction.get(collection, id, system: system) }
        return try answering { try ScriptReads.get(reader, scripts.access, collection, id, who(system), system ? [] : roles) }
    }

    func find(_ collection: String, filter: JSONValue, sort: JSONValue?, limit: Int, system: Bool) throws -> [JSONValue] {
        if let inTransaction { return try inTransaction.find(collection, filter: filter, sort: sort, limit: limit, system: system) }
        return try answering { try ScriptReads.find(reader, scripts.access, collection, filter: filter, sort: sort, limit: limit, who(system), system ? [] : roles) }
    }

    func count(_ collection: String, filter: JSONValue, system: Bool) throws -> Int {
        if let inTransaction { return try inTransaction.count(collection, filter: filter, system: system) }
        return try answering { try ScriptReads.count(reader, scripts.access, collection, filter: filter, who(system), system ? [] : roles) }
    }

    func create(_ collection: String, _ entity: JSONObject, system: Bool) throws -> JSONValue {
        try writing { try $0.create(collection, entity, system: system) }
    }

    func update(_ collection: String, _ id: String, _ patch: JSONObject, system: Bool) throws -> JSONValue {
        try writing { try $0.update(collection, id, patch, system: system) }
    }

    func delete(_ collection: String, _ id: String, system: Bool) throws {
        try writing { try $0.delete(collection, id, system: system) }
    }

    func webhook(_ event: String, _ data: JSONValue) throws {
        try writing { try $0.webhook(event, data) }
    }

    func push(_ userID: String, _ notification: JSONObject) throws {
        try writing { try $0.push(userID, notification) }
    }

    func transaction(_ body: () throws -> Void) throws {
        if inTransaction != nil { return try body() }
        // The writer job holds the slot, not the closure: the slot is emptied
        // before withoutActuallyEscaping returns, while the job may still be alive.
        let slot = ClosureSlot()
        try withoutActuallyEscaping(body) { body in
            slot.body = body
            defer { slot.body = nil }
            try commit { [self] writer in
                inTransaction = writer
                defer { inTransaction = nil }
                try slot.body?()
            }
        }
    }

    /// One write: inside the running transaction, or a transaction of its own.
    private func writing<T: Sendable>(_ body: @escaping (WriterScriptServices) throws -> T) throws -> T {
        if let inTransaction { return try body(inTransaction) }
        let unchecked = UncheckedBox(body)
        return try commit { try unchecked.value($0) }
    }

    /// Runs `operation` in the writer's next group commit and waits for COMMIT (its after hooks then queue).
    private func commit<T: Sendable>(_ operation: @escaping (WriterScriptServices) throws -> T) throws -> T {
        let (scripts, principal, roles, requestID) = (self.scripts, self.principal, self.roles, self.requestID)
        guard let hooks = scripts.hooks.get() else { throw HTTPError(.overloaded, "The server is starting; retry shortly.", headers: Headers([("Retry-After", "1")])) }
        let pending = HookServices.Pending([])
        let done = DispatchSemaphore(value: 0)
        let outcome = LockedBox<Result<T, any Error>?>(nil)
        let unchecked = UncheckedBox(operation)
        let job = StorePools.WriteJob(operation: { writer in
            try unchecked.value(WriterScriptServices(writer: writer, hooks: hooks, access: scripts.access, principal: principal, roles: roles,
                                                     requestID: requestID, pending: pending, logger: scripts.logger))
        }, completion: { result in
            if case .success = result { hooks.committed(pending)() }
            outcome.set(result)
            done.signal()
        })
        guard scripts.pools.writer.submit(job) else {
            throw ScriptServiceError(status: 503, code: "Overloaded", message: "The writer's queue is full.", underlying: Overload.writes.error)
        }
        done.wait()
        return try outcome.get()!.get()
    }

    private func answering<T>(_ body: () throws -> T) throws -> T {
        do { return try body() } catch let failure as ScriptServiceError { throw failure } catch {
            throw ScriptServiceError.from(error, requestID: requestID, logger: scripts.logger)
        }
    }
}

/// roost.transaction's function, lent to the writer job while the caller waits.
final class ClosureSlot: @unchecked Sendable {
    var body: (() throws -> Void)?
}

/// Hands a value to another thread that the sender waits for.
struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
