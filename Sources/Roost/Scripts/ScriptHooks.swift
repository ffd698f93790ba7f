import Foundation
import HTTP
import Jobs
import Hooks
import JSON
import Logging
import Scripts
import Store

/// Scripts' before hooks in the hook registry: one registration per write
/// event (`scripts`, priority 500: after the built-in checks, before the
/// webhook outbox), which runs the loaded set's hooks for the entity's
/// collection on the writer's own Lua state, inside the write's savepoint.
/// A refusal, an overrun or an error undoes everything the request did.
enum ScriptHooks {
    static let priority = 500
    /// Hooks whose writes trigger hooks: at most this deep.
    static let maxDepth = 4
    /// How deep this thread is in scripts' hooks (their writes trigger hooks).
    static let depth = ThreadSlot<ThreadCounter>()

    static let events: [(HookEvent, String)] = [(.beforeCreate, "create"), (.beforeUpdate, "update"), (.beforeDelete, "delete")]

    static func register(into registry: HookRegistry<any DocumentWriting>, runtime: ScriptRuntime, access: AccessPolicy,
                         services hooks: HookServices, logger: Logger) {
        for (event, verb) in events {
            registry.before(event, collection: nil, id: "scripts", priority: priority, source: "scripts") { ctx, next in
                let set = runtime.current
                let indices = set.hooks(.before, verb, ctx.collection)
                guard !indices.isEmpty else { return try next() }
                let counter: ThreadCounter
                if let existing = depth.value { counter = existing } else { counter = ThreadCounter(); depth.value = counter }
                guard counter.count < maxDepth else {
                    throw HookRefusal(.hookDepth, "Scripts' writes triggered hooks more than \(maxDepth) deep; nothing was written.")
                }
                counter.count += 1
                defer { counter.count -= 1 }
                let principal: AccessScope.Principal = ctx.privileged ? .admin : ctx.actor.map { .user($0) } ?? .anonymous
                let data = WriterScriptServices(writer: ctx.work, hooks: hooks, access: access, principal: principal, roles: ctx.actorRoles,
                                                requestID: ctx.requestID, logger: logger)
                let call = ScriptCall(requestID: ctx.requestID, caller: ScriptCaller(id: ctx.actor, admin: ctx.privileged), services: data)
                var entity = ctx.entity
                for index in indices {
                    do throws(ScriptFailure) {
                        try runtime.before(index, set: set, event: verb, collection: ctx.collection, id: ctx.id, entity: &entity,
                                           previous: ctx.previous, isPatch: ctx.isPatch, call: call)
                    } catch {
                        throw answer(error)
                    }
                }
                ctx.entity = entity
                try next()
            }
        }
    }

    /// What the client gets for a script's failure: a refusal as given; 503
    /// HookTimeout; 500 ScriptError (the traceback is in the journal); a
    /// roost.* call's error the script let through, as that call's answer.
    static func answer(_ failure: ScriptFailure) -> any Error {
        switch failure {
        case .refused(let status, let code, let message):
            return HookRefusal(status: status, appCode: code, message)
        case .timedOut:
            return HookRefusal(.hookTimeout, "A script ran past its time budget; nothing was written.")
        case .failed:
            return scriptError
        case .passed(let error):
            if error is HookRefusal { return error }
            if let store = error as? any StoreErrorInHook, store.isStoreFailure { return error }
            if let known = error as? any HTTPErrorConvertible {
                let http = known.httpError
                return HookRefusal(passing: http)
            }
            return error
        }
    }

    static let scriptError = HookRefusal(.scriptError, "A script failed; nothing was written. The server's log has the details.")
}
