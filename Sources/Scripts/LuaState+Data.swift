import CLuaShim
import JSON

/// roost.get/find/count/create/update/delete, as_system, transaction,
/// webhook, push and http: through the services of the running call.
extension LuaState {
    /// Most documents roost.find returns.
    static let maxFind = 1000

    func data(_ function: HostFunction) throws -> Int32 {
        guard let call, let services = call.services else {
            throw HostFailure("not available here (roost.\(function.luaName) runs inside a hook, function or job, not while a script loads)")
        }
        let system = call.system
        switch function {
        case .get:
            let document = try services.get(try string(1, "collection"), try string(2, "id"), system: system)
            if let document { push(document) } else { lua_pushnil(L) }
            return 1
        case .find:
            let collection = try string(1, "collection")
            let filter = lua_type(L, 2) <= LUA_TNIL ? JSONValue.object(JSONObject()) : .object(try object(2, "filter"))
            var sort: JSONValue?
            var limit = 100
            if lua_type(L, 3) == LUA_TTABLE {
                let options = try object(3, "options")
                sort = options["sort"]
                if let l = options["limit"] {
                    guard case .int(let n) = l, (1...Int64(Self.maxFind)).contains(n) else {
                        throw HostFailure("limit must be a whole number from 1 to \(Self.maxFind)")
                    }
                    limit = Int(n)
                }
            }
            push(.array(try services.find(collection, filter: filter, sort: sort, limit: limit, system: system)))
            return 1
        case .count:
            let collection = try string(1, "collection")
            let filter = lua_type(L, 2) <= LUA_TNIL ? JSONValue.object(JSONObject()) : .object(try object(2, "filter"))
            lua_pushinteger(L, lua_Integer(try services.count(collection, filter: filter, system: system)))
            return 1
        case .create:
            push(try services.create(try string(1, "collection"), try object(2, "entity"), system: system))
            return 1
        case .update:
            push(try services.update(try string(1, "collection"), try string(2, "id"), try object(3, "patch"), system: system))
            return 1
        case .delete:
            try services.delete(try string(1, "collection"), try string(2, "id"), system: system)
            lua_pushboolean(L, 1)
            return 1
        case .asSystem:
            guard roost_lua_isfunction(L, 1) != 0 else { throw HostFailure("the argument must be a function") }
            let was = call.system
            call.system = true
            defer { call.system = was }
            return callBack()
        case .transaction:
            guard roost_lua_isfunction(L, 1) != 0 else { throw HostFailure("the argument must be a function") }
            var results: Int32 = -1
            do {
                try services.transaction {
                    results = callBack()
                    if results < 0 { throw HostFailure(message(at: -1)) }
                }
            } catch let failure as HostFailure where results < 0 {
                _ = failure
                return -1
            }
            return results
        case .webhook:
            let event = try string(1, "event")
            guard event.utf8.count <= 128, !event.isEmpty else { throw HostFailure("event must be 1 to 128 bytes") }
            try services.webhook(event, try json(2, "data"))
            return 0
        case .push:
            try services.push(try string(1, "user id"), try object(2, "notification"))
            return 0
        case .http:
            guard services.allowsHTTP else {
                throw HostFailure("not inside a before hook (the writer's transaction); use an after hook, a function or a job")
            }
            return try http()
        default:
            throw HostFailure("unknown")
        }
    }

    /// Calls the function at index 1 with no arguments; its results (or the error message, with -1) on the stack.
    func callBack() -> Int32 {
        lua_settop(L, 1)
        let status = roost_lua_pcall(L, 0, LUA_MULTRET)
        if status != LUA_OK { return -1 }
        return lua_gettop(L)
    }
}
