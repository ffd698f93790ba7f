import Foundation
import JSON
import Logging
@testable import Scripts
import Testing

/// The sandbox and the budgets, on the engine alone: each hostile script
/// fails within its budget with the failure the client's answer needs.
@Suite(.serialized) struct SandboxTests {
    static let logger = Logger(label: "scripts-test")

    func runtime(hookMs: UInt64 = 100) -> ScriptRuntime {
        var limits = ScriptLimits()
        limits.hookNanoseconds = hookMs * 1_000_000
        limits.memoryBytes = 32 << 20
        return ScriptRuntime(limits: limits, environment: ["GREETING": "hello"], logger: Self.logger)
    }

    /// Loads one script whose before hook on "items" has `body`, and runs it once.
    func runBefore(_ body: String, entity: JSONObject = JSONObject([("price", .int(5))]),
                   runtime: ScriptRuntime? = nil) throws -> (Result<JSONObject, ScriptFailure>, Duration) {
        let rt = runtime ?? self.runtime()
        let set = try rt.compile([ScriptFile(name: "t.lua", text: "roost.before('items', 'create', function(ctx)\n\(body)\nend)")])
        rt.install(set)
        var e = entity
        let call = ScriptCall(requestID: "r1", caller: ScriptCaller(id: "u1", admin: false), services: nil)
        let clock = ContinuousClock()
        var result: Result<JSONObject, ScriptFailure>!
        let elapsed = clock.measure {
            do throws(ScriptFailure) {
                try rt.before(0, set: set, event: "create", collection: "items", id: nil, entity: &e, previous: nil, isPatch: false, call: call)
                result = .success(e)
            } catch { result = .failure(error) }
        }
        return (result, elapsed)
    }

    func isTimeout(_ r: Result<JSONObject, ScriptFailure>) -> Bool {
        if case .failure(.timedOut) = r { return true }
        return false
    }

    func isFailed(_ r: Result<JSONObject, ScriptFailure>) -> Bool {
        if case .failure(.failed) = r { return true }
        return false
    }

    @Test func aHookChangesTheEntityAndRefuses() throws {
        let (changed, _) = try runBefore("ctx.entity.stamped = 'yes'; ctx.entity.price = ctx.entity.price * 2")
        let entity = try changed.get()
        #expect(entity["stamped"] == .string("yes"))
        #expect(entity["price"] == .int(10))
        let (refused, _) = try runBefore("if ctx.entity.price < 10 then ctx.refuse(400, 'InvalidDocument', 'price too low') end")
        guard case .failure(.refused(let status, let code, let message)) = refused else { Issue.record("not refused: \(refused)"); return }
        #expect(status == 400 && code == "InvalidDocument" && message == "price too low")
        // A refusal the script catches with pcall still refuses.
        let (caught, _) = try runBefore("pcall(ctx.refuse, 409, 'Conflict', 'no')")
        guard case .failure(.refused(409, _, _)) = caught else { Issue.record("caught refusal passed: \(caught)"); return }
    }

    @Test(arguments: [
        "while true do end",
        "while true do pcall(function() while true do end end) end",
        "local function f() return f() end f()",  // a tail call loops forever
        "while true do local ok = pcall(error, 'x') end",
        "local t = {} setmetatable(t, {__index = function(t, k) return t[k] end}) while true do pcall(function() return t.x end) end",
        "xpcall(function() while true do end end, function() while true do end end) while true do end",
    ])
    func loopsStopAtTheBudget(_ body: String) throws {
        let (result, elapsed) = try runBefore(body)
        #expect(isTimeout(result), "\(body): \(result)")
        #expect(elapsed < .milliseconds(600), "\(body) took \(elapsed)")
    }

    @Test(arguments: [
        "local s = string.rep('x', 1e10)",
        "local s = ('x'):rep(1e9)",
        "local t = {} for i = 1, 1e8 do t[i] = i end",
        "local s = 'x' while true do s = s .. s end",
        "local function f(n) return 1 + f(n + 1) end f(1)",  // deep recursion: stack overflow
        "local t = {} setmetatable(t, {__gc = function() while true do end end})",
        "load('return 1')()",
        "io.open('/etc/passwd')",
        "os.execute('true')",
        "string.dump(function() end)",
        "debug.sethook()",
        "require('os')",
        "dofile('/etc/passwd')",
        "coroutine.wrap(function() end)()",
        "getmetatable('').__index.rep = nil",
        "roost.get = nil",
        "roost.log.info = nil",
        "collectgarbage('stop')",
        "print('x')",
        "package.loadlib('libc.so.6', 'system')",
    ])
    func hostileCallsFailAsScriptErrors(_ body: String) throws {
        let (result, elapsed) = try runBefore(body)
        // A memory bomb may meet the time budget before the memory cap, and a runaway
        // recursion before the stack limit on a loaded machine: either stops it.
        let mayTimeOut = body.contains("1e8") || body.contains("f(n + 1)")
        #expect(isFailed(result) || (mayTimeOut && isTimeout(result)), "\(body): \(result)")
        #expect(elapsed < .milliseconds(600), "\(body) took \(elapsed)")
    }

    @Test(arguments: [
        "string.find(string.rep('a', 60000), '.-.-.-.-.-.-b')",
        "string.match(string.rep('a', 5000), '(.*)(.*)(.*)b')",
        "for w in string.gmatch(string.rep('a', 5000), 'a*a*a*b') do end",
        "string.gsub(string.rep('a', 100000), 'a', 'b')",
        // `?` doubles the matcher's work per item: 2^30 tries without the bound
        "string.find(string.rep('a', 30), string.rep('a?', 30) .. string.rep('a', 30))",
        "string.find(string.rep('(', 3000), '%b()%b()%b()x')",
    ])
    func catastrophicPatternsAreRefusedQuickly(_ body: String) throws {
        let (result, elapsed) = try runBefore(body)
        #expect(isFailed(result), "\(body): \(result)")
        #expect(elapsed < .milliseconds(600), "\(body) took \(elapsed)")
    }

    @Test func ordinaryPatternsStillWork() throws {
        let (result, _) = try runBefore("""
            local s = '  hello world  '
            ctx.entity.trimmed = s:match('^%s*(.-)%s*$')
            ctx.entity.n = select(2, string.gsub('a,b,c', ',', ';'))
            ctx.entity.at = string.find('abc', 'b', 1, true)
            local long = '   ' .. string.rep('word ', 30) .. '  '
            ctx.entity.longTrim = #long:match('^%s*(.-)%s*$')
            local text = string.rep('lorem ipsum 42 ', 150)
            local words = 0
            for w in text:gmatch('%a+') do words = words + 1 end
            ctx.entity.words = words
            ctx.entity.digits = text:match('%d+')
            ctx.entity.plain = string.find(string.rep('a', 60000) .. 'b', 'b', 1, true)
            """)
        let e = try result.get()
        #expect(e["trimmed"] == .string("hello world"))
        #expect(e["n"] == .int(2))
        #expect(e["at"] == .int(2))
        #expect(e["longTrim"] == .int(149))
        #expect(e["words"] == .int(300))
        #expect(e["digits"] == .string("42"))
        #expect(e["plain"] == .int(60001))
    }

    /// The longest subjects docs/SCRIPTING.md's table ("String patterns: the bound") gives: allowed at n, refused at n + 1.
    @Test func thePatternBoundIsWhatTheDocsSay() throws {
        let (result, _) = try runBefore("""
            local cases = {
              {"find", "%d+x", 2235}, {"find", "%d+", 3161}, {"gmatch", "%a+", 3161}, {"match", "^%s*(.-)%s*$", 169},
              {"match", "(.-),(.-),(.-)$", 46}, {"match", "(%w+)=(%w+)", 213}, {"match", "^(%w+)=(%w+)$", 1998},
              {"find", "%b()%b()%b()x", 2580}, {"gsub", "[^%w%-_%.~]", 65536},
            }
            local bad = {}
            for _, c in ipairs(cases) do
              local fn, p, n = c[1], c[2], c[3]
              local function try(len)
                local s = string.rep(" ", len)
                if fn == "gmatch" then return pcall(function() for _ in s:gmatch(p) do end end) end
                if fn == "gsub" then return pcall(string.gsub, s, p, "") end
                return pcall(string[fn], s, p)
              end
              if not try(n) or try(n + 1) then bad[#bad + 1] = p end
            end
            if pcall(string.find, "", string.rep("a?", 30) .. string.rep("a", 30)) then bad[#bad + 1] = "a?" end
            ctx.entity.bad = table.concat(bad, " ")
            """)
        #expect(try result.get()["bad"] == .string(""))
    }

    /// C library loops the count hook cannot reach: string.rep of nothing,
    /// table.move over a huge range, table.sort without a comparator.
    @Test func libraryLoopsInCAreBoundedOrHooked() throws {
        let (result, elapsed) = try runBefore("""
            ctx.entity.rep = #string.rep('', math.maxinteger) + #('').rep('', 2^50, '')
            ctx.entity.move = select(2, pcall(table.move, {}, 1, 1e12, 2))
            local t = {5, 3, 9, 1}
            table.sort(t)
            ctx.entity.sorted = t
            local u = {'b', 'c', 'a'}
            table.sort(u, function(a, b) return a > b end)
            ctx.entity.reversed = u
            ctx.entity.mixed = (pcall(table.sort, {1, 'x', 2}))
            ctx.entity.moved = table.move({1, 2, 3}, 1, 3, 2)
            """)
        #expect(elapsed < .milliseconds(600), "took \(elapsed)")
        let e = try result.get()
        #expect(e["rep"] == .int(0))
        #expect(e["move"]?.stringValue?.contains("table.move moves at most") == true, "\(String(describing: e["move"]))")
        #expect(e["sorted"] == .array([.int(1), .int(3), .int(5), .int(9)]))
        #expect(e["reversed"] == .array([.string("c"), .string("b"), .string("a")]))
        #expect(e["mixed"] == .bool(false))
        #expect(e["moved"] == .array([.int(1), .int(1), .int(2), .int(3)]))
        // A sort that would run past the budget in C is stopped inside it, by its Lua comparator.
        let (sorting, took) = try runBefore("""
            local t = {} for i = 1, 150000 do t[i] = (i * 7919) % 150001 end
            while true do table.sort(t) end
            """, runtime: runtime(hookMs: 50))
        #expect(isTimeout(sorting), "\(sorting)")
        #expect(took < .milliseconds(600), "took \(took)")
    }

    @Test func theStringMetatableIsLockedAndGlobalsStayPerScript() throws {
        let (result, _) = try runBefore("""
            ctx.entity.mt = getmetatable('')
            ctx.entity.rmt = getmetatable(roost)
            string.upper = nil
            ctx.entity.up = ('a'):upper()
            ctx.entity.env = roost.env('GREETING')
            ctx.entity.secret = roost.env('HOME') == nil
            ctx.entity.tags = roost.array({})
            ctx.entity.none = roost.null
            """)
        let e = try result.get()
        #expect(e["mt"] == .string("locked"))
        #expect(e["rmt"] == .string("locked"))
        #expect(e["up"] == .string("A"))
        #expect(e["env"] == .string("hello"))
        #expect(e["secret"] == .bool(true))
        #expect(e["tags"] == .array([]))
        #expect(e["none"] == .null)
    }

    @Test func aSyntaxErrorNamesFileAndLine() throws {
        let rt = runtime()
        #expect(throws: ScriptError.self) { try rt.compile([ScriptFile(name: "bad.lua", text: "local x = \n\n roost.before(") ]) }
        do { _ = try rt.compile([ScriptFile(name: "bad.lua", text: "local x = 1\nx = = 2")]) } catch {
            #expect("\(error)".contains("bad.lua:2"), "\(error)")
        }
        do { _ = try rt.compile([ScriptFile(name: "loop.lua", text: "while true do end")]) } catch {
            #expect("\(error)".contains("loop.lua"), "\(error)")
        }
    }

    @Test func bytecodeIsRefused() throws {
        let rt = runtime()
        #expect(throws: ScriptError.self) { try rt.compile([ScriptFile(name: "b.lua", text: "\u{1B}Lua\u{54}\u{00}")]) }
    }

    @Test func registrationsListFileAndLine() throws {
        let rt = runtime()
        let set = try rt.compile([ScriptFile(name: "a.lua", text: """
            roost.before('posts', 'create', function(ctx) end)
            roost.after('*', 'delete', function(ctx) end)
            roost.route('post', 'checkout', function(req) return 201, {ok = true} end)
            roost.every('5m', function() end)
            roost.cron('0 3 * * *', function() end)
            """)])
        #expect(set.registrations.map(\.description) == [
            "before create posts a.lua:1", "after delete * a.lua:2", "route POST /fn/checkout a.lua:3",
            "every 5m a.lua:4", "cron 0 3 * * * a.lua:5",
        ])
        #expect(throws: ScriptError.self) { try rt.compile([ScriptFile(name: "e.lua", text: "roost.before('x', 'explode', function() end)")]) }
        #expect(throws: ScriptError.self) { try rt.compile([ScriptFile(name: "c.lua", text: "roost.cron('61 * * * *', function() end)")]) }
    }

    @Test func cronAndEveryFindTheirNextRun() throws {
        let nightly = try JobSchedule(kind: .cron, text: "0 3 * * *")
        // 2026-01-01T00:00:00Z = 1767225600
        #expect(nightly.next(after: 1_767_225_600) == 1_767_225_600 + 3 * 3600)
        let every = try JobSchedule(kind: .every, text: "5m")
        #expect(every.next(after: 1000) == 1200)
        let start: Int64 = 1_767_225_600
        let morning = try #require(nightly.latest(atOrBefore: start + 5 * 3600))
        #expect(morning == start + 3 * 3600)
        #expect(try JobSchedule(kind: .cron, text: "30 12 * * 1").next(after: 1_767_225_600) == 1_767_225_600 + 4 * 86_400 + 12 * 3600 + 1800)
        let yesterday = try #require(nightly.latest(atOrBefore: start + 2 * 3600))
        #expect(yesterday == start + 3 * 3600 - 86_400)
    }

    /// The issue's bound: an idle state with the examples (etc/roost/scripts) loaded holds at most 1 MiB.
    @Test func anIdleStateWithTheExamplesIsSmall() throws {
        let rt = runtime()
        let examples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../etc/roost/scripts").standardized.path
        let files = try ScriptFile.all(in: examples)
        #expect(files.count >= 6)
        let set = try rt.compile(files + [ScriptFile(name: "zz.lua", text: "roost.before('posts', 'create', function(ctx) ctx.entity.x = 1 end)")])
        rt.install(set)
        var e = JSONObject()
        let call = ScriptCall(requestID: "r", caller: .system, services: nil)
        try rt.before(set.registrations.count - 1, set: set, event: "create", collection: "posts", id: nil, entity: &e, previous: nil,
                      isPatch: false, call: call)
        #expect(e["x"] == .int(1))
        let bytes = try #require(rt.stateMemory())
        #expect(bytes < 1 << 20, "\(bytes) bytes")
    }
}
