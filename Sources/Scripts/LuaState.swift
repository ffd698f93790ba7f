import CLuaShim
import JSON

/// One Lua state with the scripts loaded into it, used by one thread only.
///
/// Every Lua API call made from Swift runs either inside a host function
/// (the C trampoline holds the allocator open) or inside `held { }`; raw
/// table access only, so no metamethod and no allocation failure can
/// `longjmp` over a Swift frame. Errors and budgets are handled in C
/// (`roost_lua_pcall`, the count hook); Swift sees statuses.
final class LuaState {
    let L: OpaquePointer
    let runtime: ScriptRuntime
    /// The set this state loaded; a newer one replaces the state.
    let generation: Int
    /// Registry references of the handlers, in registration order (the set's `registrations`).
    private(set) var handlerRefs: [Int32] = []
    /// What the scripts registered while they loaded (only while loading).
    var loading: [ScriptRegistration]?
    /// The file being loaded, for registrations.
    var loadingFile = ""
    /// The running call's context (host functions read it).
    var call: ScriptCall?
    /// The metatable that marks a Lua table as a JSON array.
    private(set) var arrayMeta: Int32 = 0

    /// Opens a state and loads `set` into it; throws `ScriptError.load` with file:line for a script that fails.
    init(runtime: ScriptRuntime, set: ScriptSet) throws {
        guard let L = roost_lua_open(runtime.limits.memoryBytes) else { throw ScriptError.load("cannot create a Lua state (out of memory)") }
        self.L = L
        self.runtime = runtime
        generation = set.generation
        roost_lua_set_user(L, Unmanaged.passUnretained(self).toOpaque())
        held {
            lua_createtable(L, 0, 1)
            arrayMeta = roost_lua_ref(L)
        }
        loading = []
        for file in set.files { try load(file) }
        guard let registered = loading else { return }
        loading = nil
        handlerRefs = registered.map(\.ref)
        if generationListing == nil { generationListing = registered.map { $0.withoutRef } }
    }

    /// The registrations found by the first load (the runtime's catalog reads it).
    private(set) var generationListing: [ScriptRegistration]?

    deinit { roost_lua_close(L) }

    /// Runs `body` with allocations that cannot fail (and so cannot longjmp).
    @inline(__always)
    func held<T>(_ body: () throws -> T) rethrows -> T {
        roost_lua_hold(L, 1)
        defer { roost_lua_hold(L, -1) }
        return try body()
    }

    /// Compiles and runs one script file in an environment of its own.
    private func load(_ file: ScriptFile) throws {
        loadingFile = file.name
        let top = lua_gettop(L)
        defer { lua_settop(L, top) }
        let status: Int32 = held {
            roost_lua_push_env(L)
            pushAPI()
            let bytes = Array(file.text.utf8)
            return bytes.withUnsafeBufferPointer { buf in
                buf.withMemoryRebound(to: CChar.self) { roost_lua_load_text(L, $0.baseAddress, $0.count, "@" + file.name) }
            }
        }
        if status != LUA_OK { throw ScriptError.load(message(at: -1)) }
        roost_lua_begin(L, Int64(runtime.limits.loadTimeoutNanoseconds), 0)
        let ran = roost_lua_pcall(L, 0, 0)
        let flags = roost_lua_end(L)
        if ran != LUA_OK {
            throw ScriptError.load(flags & Int32(ROOST_LUA_TIMED_OUT) != 0 ? "\(file.name): ran past its time budget while loading" : message(at: -1))
        }
    }

    /// Pushes the `roost` table (read-only) into the environment on top of the stack.
    private func pushAPI() {
        let env = lua_gettop(L)
        lua_createtable(L, 0, Int32(HostFunction.allCases.count + 4))
        let api = lua_gettop(L)
        var log: Int32 = 0
        lua_createtable(L, 0, 3)
        log = lua_gettop(L)
        for function in HostFunction.allCases {
            if function.isLog {
                pushString(function.luaName)
                roost_lua_push_host(L, Int32(function.rawValue))
                lua_rawset(L, log)
            } else if function != .refuse {
                pushString(function.luaName)
                roost_lua_push_host(L, Int32(function.rawValue))
                lua_rawset(L, api)
            }
        }
        pushString("log")
        roost_lua_push_readonly(L, log)
        lua_rawset(L, api)
        lua_settop(L, api)
        pushString("null")
        lua_pushlightuserdata(L, nil)
        lua_rawset(L, api)
        pushString("roost")
        roost_lua_push_readonly(L, api)
        lua_rawset(L, env)
        lua_settop(L, env)
    }

    // MARK: calls

    /// What a call came to.
    enum Outcome {
        case returned([JSONValue])
        case refused(HookRefusalValue)
        case timedOut(String)
        case outOfMemory(String)
        case failed(String)
        /// A roost.* call failed and the script let the error through.
        case passed(any Error)
    }

    /// Calls handler `index` with the arguments `push` leaves on the stack,
    /// within `budget` nanoseconds, and converts up to `results` return values.
    /// `after` reads what it needs from the stack while the arguments are still there (ctx.entity).
    func callHandler(_ index: Int, call: ScriptCall, budget: UInt64, results: Int32 = 1,
                     push: () -> Int32, after: ((Int32) -> Void)? = nil) -> Outcome {
        let top = lua_gettop(L)
        defer { lua_settop(L, top) }
        let saved = self.call
        self.call = call
        defer { self.call = saved }
        let argBase = top + 1
        let nargs: Int32 = held {
            roost_lua_getref(L, handlerRefs[index])
            let n = push()
            // Keep the first argument (the ctx table) below the function to read it back afterwards.
            if n > 0 {
                lua_pushvalue(L, argBase + 1)
                lua_rotate(L, argBase, 1)
            }
            return n
        }
        roost_lua_begin(L, Int64(budget), runtime.limits.callBytes)
        let status = roost_lua_pcall(L, nargs, results)
        let flags = roost_lua_end(L)
        if let refusal = call.refusal { return .refused(refusal) }
        if flags & Int32(ROOST_LUA_TIMED_OUT) != 0 { return .timedOut(held { message(at: -1) }) }
        if status != LUA_OK {
            let text = held { message(at: -1) }
            if flags & Int32(ROOST_LUA_OUT_OF_MEMORY) != 0, text.contains("not enough memory") { return .outOfMemory(text) }
            if let failure = call.failure, text.contains(call.failureText) { return .passed(failure) }
            return .failed(text)
        }
        return held {
            if nargs > 0 { after?(argBase) }
            var values: [JSONValue] = []
            let first = lua_gettop(L) - results + 1
            for i in 0..<results {
                do { values.append(try value(at: first + i)) } catch {
                    return .failed("the handler returned a value that is not JSON: \(error)")
                }
            }
            return .returned(values)
        }
    }

    /// The string at `index` (an error message), or a description of its type.
    func message(at index: Int32) -> String {
        var len = 0
        guard let p = roost_lua_tolstring(L, index, &len) else { return "(an error that is not a string)" }
        return String(decoding: UnsafeRawBufferPointer(start: p, count: len), as: UTF8.self)
    }

    func pushString(_ s: String) {
        var s = s
        s.withUTF8 { buf in _ = lua_pushlstring(L, buf.baseAddress, buf.count) }
    }
}

/// A before hook's refusal as the script gave it.
struct HookRefusalValue {
    let status: Int
    let code: String
    let message: String
}
