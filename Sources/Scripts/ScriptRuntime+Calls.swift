import CLuaShim
import Foundation
import JSON
import Logging

/// The calls Roost makes into scripts. Each runs handler `index` of `set`
/// on this thread's state within its budget, records its stats, and logs a
/// failure with its traceback (file:line) and the request id.
extension ScriptRuntime {
    /// A before hook: `entity` is what the hook may change (ctx.entity).
    public func before(_ index: Int, set: ScriptSet, event: String, collection: String, id: String?,
                       entity: inout JSONObject, previous: JSONObject?, isPatch: Bool, call: ScriptCall) throws(ScriptFailure) {
        let state = try loadedState(set, call)
        var changed: JSONValue?
        var readBack: (any Error)?
        let started = DispatchTime.now().uptimeNanoseconds
        let outcome = state.callHandler(index, call: call, budget: limits.hookNanoseconds, results: 0, push: {
            pushContext(state, event: event, collection: collection, id: id, entity: entity, previous: previous, isPatch: isPatch, call: call, refuse: true)
            return 1
        }, after: { ctx in
            state.pushString("entity")
            lua_rawget(state.L, ctx)
            do { changed = try state.value(at: -1) } catch { readBack = error }
        })
        try settle(outcome, index, set, call, started: started)
        if let readBack {
            log(index, set, call, "ctx.entity is not JSON: \(readBack)")
            throw .failed
        }
        switch changed {
        case .object(let o)?: entity = LuaState.ordered(o, like: entity)
        case .array(let a)? where a.isEmpty: entity = JSONObject()
        default:
            log(index, set, call, "ctx.entity must stay a table of named fields")
            throw .failed
        }
    }

    /// An after hook (the write committed; its outcome cannot change).
    public func after(_ index: Int, set: ScriptSet, event: String, collection: String, entity: JSONObject, call: ScriptCall) {
        guard let state = try? loadedState(set, call) else { return }
        let started = DispatchTime.now().uptimeNanoseconds
        let outcome = state.callHandler(index, call: call, budget: limits.hookNanoseconds, results: 0, push: {
            pushContext(state, event: event, collection: collection, id: entity["_id"]?.stringValue, entity: entity, previous: nil,
                        isPatch: false, call: call, refuse: false)
            return 1
        })
        try? settle(outcome, index, set, call, started: started)
    }

    /// A `/fn/` function: `request` is its req table; returns the status and the JSON body.
    public func function(_ index: Int, set: ScriptSet, request: JSONObject, call: ScriptCall) throws(ScriptFailure) -> (Int, JSONValue) {
        let state = try loadedState(set, call)
        let started = DispatchTime.now().uptimeNanoseconds
        let outcome = state.callHandler(index, call: call, budget: limits.functionNanoseconds, results: 2, push: {
            state.push(request)
            state.pushString("caller")
            state.push(call.caller.json)
            lua_rawset(state.L, -3)
            return 1
        })
        try settle(outcome, index, set, call, started: started)
        guard case .returned(let values) = outcome else { throw .failed }
        if case .int(let status) = values[0] {
            guard (200...599).contains(status) else {
                log(index, set, call, "a function's status must be from 200 to 599, not \(status)")
                throw .failed
            }
            return (Int(status), values[1])
        }
        return (200, values[0])
    }

    /// A scheduled job, for its period starting at `fire` (seconds since 1970): ctx.fire, ctx.schedule, ctx.request_id.
    public func job(_ index: Int, set: ScriptSet, fire: Int64, call: ScriptCall) throws(ScriptFailure) {
        let state = try loadedState(set, call)
        let started = DispatchTime.now().uptimeNanoseconds
        let outcome = state.callHandler(index, call: call, budget: limits.jobNanoseconds, results: 0, push: {
            state.push(JSONObject([("fire", .int(fire)), ("schedule", .string(set.registrations[index].target)),
                                   ("request_id", .string(call.requestID))]))
            return 1
        })
        try settle(outcome, index, set, call, started: started)
    }

    private func loadedState(_ set: ScriptSet, _ call: ScriptCall) throws(ScriptFailure) -> LuaState {
        do { return try state(for: set) } catch {
            logger.error("scripts failed to load on this thread", metadata: ["error": "\(error)", "request_id": "\(call.requestID)"])
            throw .failed
        }
    }

    private func pushContext(_ state: LuaState, event: String, collection: String, id: String?, entity: JSONObject,
                             previous: JSONObject?, isPatch: Bool, call: ScriptCall, refuse: Bool) {
        let L = state.L
        lua_createtable(L, 0, 10)
        let fields: [(String, JSONValue?)] = [
            ("event", .string(event)), ("collection", .string(collection)), ("id", id.map { .string($0) }),
            ("request_id", .string(call.requestID)), ("is_patch", .bool(isPatch)),
        ]
        for (key, value) in fields {
            guard let value else { continue }
            state.pushString(key)
            state.push(value)
            lua_rawset(L, -3)
        }
        state.pushString("entity")
        state.push(entity)
        lua_rawset(L, -3)
        if let previous {
            state.pushString("previous")
            state.push(previous)
            lua_rawset(L, -3)
        }
        state.pushString("caller")
        state.push(call.caller.json)
        lua_rawset(L, -3)
        if refuse {
            state.pushString("refuse")
            roost_lua_push_host(L, Int32(HostFunction.refuse.rawValue))
            lua_rawset(L, -3)
        }
    }

    /// Records the call and turns its outcome into a failure to throw (or none).
    private func settle(_ outcome: LuaState.Outcome, _ index: Int, _ set: ScriptSet, _ call: ScriptCall, started: UInt64) throws(ScriptFailure) {
        let elapsed = DispatchTime.now().uptimeNanoseconds &- started
        if let observe {
            let result: String
            switch outcome {
            case .returned: result = "ok"
            case .refused: result = "refused"
            case .timedOut: result = "timeout"
            default: result = "error"
            }
            observe(set.registrations[index].kind.rawValue, result, elapsed)
        }
        switch outcome {
        case .returned:
            set.stats.record(index, nanoseconds: elapsed, failed: false, timedOut: false)
        case .refused(let r):
            set.stats.record(index, nanoseconds: elapsed, failed: false, timedOut: false)
            throw .refused(status: r.status, code: r.code, message: r.message)
        case .passed(let error):
            set.stats.record(index, nanoseconds: elapsed, failed: true, timedOut: false)
            throw .passed(error)
        case .timedOut(let text):
            set.stats.record(index, nanoseconds: elapsed, failed: true, timedOut: true)
            log(index, set, call, "ran past its time budget", traceback: text)
            throw .timedOut
        case .outOfMemory(let text):
            set.stats.record(index, nanoseconds: elapsed, failed: true, timedOut: false)
            log(index, set, call, "ran out of memory", traceback: text)
            throw .failed
        case .failed(let text):
            set.stats.record(index, nanoseconds: elapsed, failed: true, timedOut: false)
            log(index, set, call, "raised an error", traceback: text)
            throw .failed
        }
    }

    func log(_ index: Int, _ set: ScriptSet, _ call: ScriptCall, _ what: String, traceback: String? = nil) {
        let r = set.registrations[index]
        var metadata: Logger.Metadata = ["script": "\(r.location)", "handler": "\(r)", "request_id": "\(call.requestID)"]
        if let traceback { metadata["traceback"] = "\(traceback.prefix(4000))" }
        logger.error("script \(what)", metadata: metadata)
    }
}
