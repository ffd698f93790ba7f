import CLuaShim
import JSON

/// JSON values to and from Lua: objects are tables, arrays are tables with
/// the array mark (so `{}` and `[]` survive a round trip), null is
/// `roost.null`. Call with allocations held (`held` or a host function).
extension LuaState {
    /// Deepest nesting either way.
    static let maxDepth = 64
    /// Most values one conversion from Lua may make.
    static let maxValues = 200_000

    struct NotJSON: Error, CustomStringConvertible {
        let description: String
    }

    func push(_ value: JSONValue, depth: Int = 0) {
        _ = lua_checkstack(L, 4)
        switch value {
        case .null: lua_pushlightuserdata(L, nil)
        case .bool(let b): lua_pushboolean(L, b ? 1 : 0)
        case .int(let i): lua_pushinteger(L, i)
        case .double(let d): lua_pushnumber(L, d)
        case .string(let s): pushString(s)
        case .array(let items):
            lua_createtable(L, Int32(clamping: items.count), 0)
            for (i, item) in items.enumerated() {
                push(item, depth: depth + 1)
                lua_rawseti(L, -2, lua_Integer(i + 1))
            }
            markArray(-1)
        case .object(let object):
            push(object, depth: depth)
        }
    }

    func push(_ object: JSONObject, depth: Int = 0) {
        lua_createtable(L, 0, Int32(clamping: object.count))
        for (key, value) in object {
            pushString(key)
            push(value, depth: depth + 1)
            lua_rawset(L, -3)
        }
    }

    /// Sets the array mark on the table at `index`.
    func markArray(_ index: Int32) {
        let table = lua_absindex(L, index)
        roost_lua_getref(L, arrayMeta)
        lua_setmetatable(L, table)
    }

    private func isMarkedArray(_ index: Int32) -> Bool {
        guard lua_getmetatable(L, index) != 0 else { return false }
        roost_lua_getref(L, arrayMeta)
        defer { lua_settop(L, -3) }
        return lua_rawequal(L, -1, -2) != 0
    }

    /// The value at `index` as JSON (nil is null).
    func value(at index: Int32) throws -> JSONValue {
        var budget = Self.maxValues
        return try value(at: lua_absindex(L, index), depth: 0, budget: &budget)
    }

    private func value(at index: Int32, depth: Int, budget: inout Int) throws -> JSONValue {
        budget -= 1
        guard budget > 0 else { throw NotJSON(description: "more than \(Self.maxValues) values") }
        switch lua_type(L, index) {
        case LUA_TNIL: return .null
        case LUA_TBOOLEAN: return .bool(lua_toboolean(L, index) != 0)
        case LUA_TNUMBER:
            if lua_isinteger(L, index) != 0 { return .int(lua_tointegerx(L, index, nil)) }
            let d = lua_tonumberx(L, index, nil)
            guard d.isFinite else { throw NotJSON(description: "a number that is not finite") }
            return .double(d)
        case LUA_TSTRING: return .string(message(at: index))
        case LUA_TLIGHTUSERDATA where lua_touserdata(L, index) == nil: return .null
        case LUA_TTABLE:
            guard depth < Self.maxDepth else { throw NotJSON(description: "nesting deeper than \(Self.maxDepth)") }
            _ = lua_checkstack(L, 4)
            let count = Int(lua_rawlen(L, index))
            if isMarkedArray(index) || (count > 0 && tableKeysAreOneTo(count, index)) {
                var items: [JSONValue] = []
                items.reserveCapacity(count)
                for i in 1...max(count, 1) where i <= count {
                    lua_rawgeti(L, index, lua_Integer(i))
                    defer { lua_settop(L, -2) }
                    items.append(try value(at: lua_gettop(L), depth: depth + 1, budget: &budget))
                }
                return .array(items)
            }
            var members: [(String, JSONValue)] = []
            lua_pushnil(L)
            while lua_next(L, index) != 0 {
                defer { lua_settop(L, -2) }
                guard lua_type(L, -2) == LUA_TSTRING else {
                    throw NotJSON(description: "a table with both list items and named fields, or keys that are not strings")
                }
                let key = message(at: -2)
                members.append((key, try value(at: lua_gettop(L), depth: depth + 1, budget: &budget)))
            }
            members.sort { $0.0 < $1.0 }
            return .object(JSONObject(members.map { (key: $0.0, value: $0.1) }))
        default:
            let names = [LUA_TFUNCTION: "function", LUA_TUSERDATA: "userdata", LUA_TTHREAD: "thread", LUA_TLIGHTUSERDATA: "userdata"]
            throw NotJSON(description: "a \(names[lua_type(L, index)] ?? "non-JSON") value")
        }
    }

    /// True when the table's keys are exactly 1...count.
    private func tableKeysAreOneTo(_ count: Int, _ index: Int32) -> Bool {
        var keys = 0
        lua_pushnil(L)
        while lua_next(L, index) != 0 {
            lua_settop(L, -2)
            keys += 1
            guard lua_type(L, -1) == LUA_TNUMBER, lua_isinteger(L, -1) != 0 else { lua_settop(L, -2); return false }
        }
        return keys == count
    }

    /// An object's members in `original`'s order first, new ones after (a script's table has no order).
    static func ordered(_ object: JSONObject, like original: JSONObject) -> JSONObject {
        var result = JSONObject()
        for (key, _) in original { if let v = object[key] { result[key] = v } }
        for (key, value) in object where original[key] == nil { result[key] = value }
        return result
    }
}
