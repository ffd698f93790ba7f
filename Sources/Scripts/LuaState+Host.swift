import CLuaShim
import Hooks
import JSON
import Logging

/// The one C entry of every roost.* call: finds the state and runs the host function.
let hostEntry: roost_lua_host = { L, id in
    guard let L, let user = roost_lua_user(L), let function = HostFunction(rawValue: id) else { return -1 }
    return Unmanaged<LuaState>.fromOpaque(user).takeUnretainedValue().host(function)
}

/// A host function's failure: its message becomes the Lua error.
struct HostFailure: Error {
    let message: String
    init(_ message: String) { self.message = message }
}

extension LuaState {
    /// Runs a roost.* function: its results on the stack and their count,
    /// or an error message on the stack and -1. Runs inside the trampoline
    /// (allocations held); never raises.
    func host(_ function: HostFunction) -> Int32 {
        do {
            return try run(function)
        } catch let failure as HostFailure {
            pushString("roost.\(function.luaName): \(failure.message)")
        } catch let failure as ScriptServiceError {
            let text = "roost.\(function.luaName): \(failure.status) \(failure.code): \(failure.message)"
            call?.failure = failure.underlying
            call?.failureText = text
            pushString(text)
        } catch {
            let text = "roost.\(function.luaName): \(error)"
            call?.failure = error
            call?.failureText = text
            pushString(text)
        }
        return -1
    }

    private func run(_ function: HostFunction) throws -> Int32 {
        if function.isRegistration { return try register(function) }
        switch function {
        case .info, .warn, .error: return log(function)
        case .array:
            if lua_type(L, 1) != LUA_TTABLE { lua_settop(L, 0); lua_createtable(L, 0, 0) }
            lua_settop(L, 1)
            markArray(1)
            return 1
        case .env:
            let name = try string(1, "name")
            guard let value = runtime.environment[name] else { lua_pushnil(L); return 1 }
            pushString(value)
            return 1
        case .refuse:
            return try refuse()
        default:
            return try data(function)
        }
    }

    // MARK: registration

    private func register(_ function: HostFunction) throws -> Int32 {
        guard loading != nil else { throw HostFailure("handlers are registered while the script loads, not from a handler") }
        var buf = [CChar](repeating: 0, count: 512)
        roost_lua_where(L, 1, &buf, buf.count)
        let location = Self.text(buf)
        let kind: ScriptRegistration.Kind
        var event = "", target: String
        switch function {
        case .before, .after:
            kind = function == .before ? .before : .after
            target = try string(1, "collection")
            event = try string(2, "event")
            let events = kind == .before ? ScriptRegistration.beforeEvents : ScriptRegistration.afterEvents
            guard events.contains(event) else {
                throw HostFailure("event must be one of \(events.sorted().joined(separator: ", ")), not \"\(event)\"")
            }
            guard target == "*" || Self.isCollectionName(target) else { throw HostFailure("\"\(target)\" is not a collection name or \"*\"") }
            if event == "login" { target = "users" }
            try function3IsHandler()
        case .route:
            kind = .route
            event = try string(1, "method").uppercased()
            target = try string(2, "name")
            guard ScriptRegistration.methods.contains(event) else { throw HostFailure("method must be GET, POST, PUT, PATCH or DELETE") }
            guard Self.isFunctionName(target) else { throw HostFailure("\"\(target)\" is not a function name (letters, digits, - and _, up to 64)") }
            if loading!.contains(where: { $0.kind == .route && $0.event == event && $0.target == target }) {
                throw HostFailure("\(event) /fn/\(target) is already registered")
            }
            try function3IsHandler()
        default:
            kind = function == .every ? .every : .cron
            target = try string(1, "schedule")
            do { _ = try JobSchedule(kind: kind, text: target) } catch { throw HostFailure("\(error)") }
            guard roost_lua_isfunction(L, 2) != 0 else { throw HostFailure("the second argument must be a function") }
            lua_settop(L, 2)
        }
        if kind != .every && kind != .cron { lua_settop(L, 3) }
        let ref = roost_lua_ref(L)
        loading!.append(ScriptRegistration(kind: kind, event: event, target: target, location: location, ref: ref))
        return 0
    }

    private func function3IsHandler() throws {
        guard roost_lua_isfunction(L, 3) != 0 else { throw HostFailure("the third argument must be a function") }
    }

    static func isCollectionName(_ s: String) -> Bool {
        guard let first = s.unicodeScalars.first, first.properties.isAlphabetic || first == "_", s.utf8.count <= 64 else { return false }
        return s.unicodeScalars.allSatisfy { ($0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0))) || $0 == "_" || $0 == "-" }
    }

    static func isFunctionName(_ s: String) -> Bool {
        !s.isEmpty && s.utf8.count <= 64
            && s.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "-" || $0 == "_") }
    }

    // MARK: arguments

    func string(_ index: Int32, _ what: String) throws -> String {
        guard lua_type(L, index) == LUA_TSTRING else { throw HostFailure("\(what) must be a string") }
        return message(at: index)
    }

    func object(_ index: Int32, _ what: String) throws -> JSONObject {
        guard lua_type(L, index) == LUA_TTABLE else { throw HostFailure("\(what) must be a table") }
        let value: JSONValue
        do { value = try self.value(at: index) } catch { throw HostFailure("\(what): \(error)") }
        switch value {
        case .object(let o): return o
        case .array(let a) where a.isEmpty: return JSONObject()
        default: throw HostFailure("\(what) must be a table of named fields")
        }
    }

    func json(_ index: Int32, _ what: String) throws -> JSONValue {
        do { return try value(at: index) } catch { throw HostFailure("\(what): \(error)") }
    }

    // MARK: log and refuse

    private func log(_ function: HostFunction) -> Int32 {
        let text = lua_type(L, 1) == LUA_TSTRING ? message(at: 1) : "(no message)"
        var metadata: Logger.Metadata = ["script": "\(Self.where(L))"]
        if let call { metadata["request_id"] = "\(call.requestID)" }
        if lua_type(L, 2) == LUA_TTABLE, case .object(let fields)? = try? value(at: 2) {
            for (key, value) in fields.members.prefix(32) { metadata[key] = "\(value.stringValue ?? value.jsonText)" }
        }
        let level: Logger.Level = function == .info ? .info : function == .warn ? .warning : .error
        runtime.logger.log(level: level, "\(text.prefix(4096))", metadata: metadata)
        return 0
    }

    static func `where`(_ L: OpaquePointer) -> String {
        var buf = [CChar](repeating: 0, count: 512)
        roost_lua_where(L, 1, &buf, buf.count)
        return text(buf)
    }

    /// A NUL-terminated buffer's text.
    static func text(_ buf: [CChar]) -> String {
        String(decoding: buf.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// ctx.refuse(status, code, message): the write is refused with a 4xx the client sees.
    private func refuse() throws -> Int32 {
        guard let call else { throw HostFailure("refuse is only for before hooks") }
        let status = lua_isinteger(L, 1) != 0 ? Int(lua_tointegerx(L, 1, nil)) : 0
        let code = lua_type(L, 2) == LUA_TSTRING ? message(at: 2) : "Refused"
        let text = lua_type(L, 3) == LUA_TSTRING ? message(at: 3) : "A hook refused the write."
        if let problem = HookRefusal.appCodeProblem(status: status, code: code) { throw HostFailure(problem) }
        call.refusal = HookRefusalValue(status: status, code: code, message: String(text.prefix(1000)))
        pushString("refused: \(status) \(code)")
        return -1
    }
}
