import Foundation
import HTTP
import Hooks
import JSON
import Logging
import Testing

/// A stand-in unit of work: what was written, and whether it committed.
final class FakeTransaction: @unchecked Sendable {
    var log: [String] = []
}

@Suite struct HookRegistryTests {
    let logger = Logger(label: "test")

    func context(_ tx: FakeTransaction, _ event: HookEvent = .beforeCreate, collection: String = "messages") -> WriteContext<FakeTransaction> {
        WriteContext(event: event, collection: collection, id: nil, actor: "u1", privileged: false, requestID: "req-1",
                     work: tx, entity: JSONObject([("text", .string("hi"))]))
    }

    @Test func beforeHooksRunByPriorityThenRegistrationAndWrapTheWrite() throws {
        let registry = HookRegistry<FakeTransaction>(logger: logger)
        for (id, priority) in [("b", 0), ("late", 5), ("a", -10), ("c", 0)] {
            registry.before(.beforeCreate, collection: "messages", id: id, priority: priority) { ctx, next in
                ctx.work.log.append(">" + id)
                try next()
                ctx.work.log.append("<" + id)
            }
        }
        registry.before(.beforeCreate, collection: "other", id: "elsewhere") { ctx, next in ctx.work.log.append("x"); try next() }
        registry.before(.beforeCreate, collection: nil, id: "everywhere", priority: 100) { ctx, next in
            try next()
            ctx.work.log.append("saw " + (ctx.stored?["text"]?.stringValue ?? "nothing"))
        }
        let tx = FakeTransaction()
        let ctx = context(tx)
        try registry.runBefore(ctx) {
            tx.log.append("write")
            ctx.stored = ctx.entity
        }
        #expect(tx.log == [">a", ">b", ">c", ">late", "write", "saw hi", "<late", "<c", "<b", "<a"])
        #expect(registry.registrations.filter { $0.event == .beforeCreate && $0.collection == "messages" }.map(\.id) == ["a", "b", "c", "late"])
    }

    @Test func aRefusalStopsTheChainAndTheWrite() throws {
        let registry = HookRegistry<FakeTransaction>(logger: logger)
        registry.before(.beforeCreate, collection: "messages", id: "edit", priority: 1) { ctx, next in
            ctx.entity["text"] = .string("edited")
            try next()
        }
        registry.before(.beforeCreate, collection: "messages", id: "refuse", priority: 2) { ctx, _ in
            ctx.work.log.append("refusing " + (ctx.entity["text"]?.stringValue ?? ""))
            throw HookRefusal(.forbidden, "not you")
        }
        registry.before(.beforeCreate, collection: "messages", id: "never", priority: 3) { ctx, next in
            ctx.work.log.append("never")
            try next()
        }
        let tx = FakeTransaction()
        #expect {
            try registry.runBefore(context(tx)) { tx.log.append("write") }
        } throws: { error in
            (error as? HookRefusal)?.status == 403 && (error as? HookRefusal)?.message == "not you"
        }
        #expect(tx.log == ["refusing edited"])
    }

    @Test func aThrowingHookBecomesAFailureAndWriteErrorsPassThrough() throws {
        struct Boom: Error {}
        struct StoreSaysNo: Error {}
        let registry = HookRegistry<FakeTransaction>(logger: logger)
        registry.before(.beforeUpdate, collection: "messages", id: "boom") { _, _ in throw Boom() }
        registry.before(.beforeDelete, collection: "messages", id: "fine") { _, next in try next() }
        let tx = FakeTransaction()
        #expect { try registry.runBefore(context(tx, .beforeUpdate)) {} } throws: {
            ($0 as? HookRefusal)?.status == 500 && ($0 as? HookRefusal)?.code == "HookFailed"
        }
        #expect(throws: StoreSaysNo.self) { try registry.runBefore(context(tx, .beforeDelete)) { throw StoreSaysNo() } }
    }

    @Test(arguments: [true, false])
    func aStoreFailureMetByAHookPassesThroughOtherStoreErrorsStayTheHooks(storeFailed: Bool) throws {
        struct StoreError: StoreErrorInHook { let isStoreFailure: Bool }
        let registry = HookRegistry<FakeTransaction>(logger: logger)
        registry.before(.beforeCreate, collection: "messages", id: "reads") { _, _ in throw StoreError(isStoreFailure: storeFailed) }
        let tx = FakeTransaction()
        #expect { try registry.runBefore(context(tx)) { tx.log.append("write") } } throws: { error in
            storeFailed ? error is StoreError : (error as? HookRefusal)?.code == "HookFailed"
        }
        #expect(tx.log.isEmpty)
    }

    @Test func aHookThatForgetsNextFails() throws {
        let registry = HookRegistry<FakeTransaction>(logger: logger)
        registry.before(.beforeCreate, collection: "messages", id: "lazy") { _, _ in }
        let tx = FakeTransaction()
        #expect { try registry.runBefore(context(tx)) { tx.log.append("write") } } throws: { ($0 as? HookRefusal)?.status == 500 }
        #expect(tx.log.isEmpty)
    }

    @Test func anOverrunRefusesAndTimeInsideNextIsNotCounted() throws {
        let registry = HookRegistry<FakeTransaction>(logger: logger)
        registry.before(.beforeCreate, collection: "slow", id: "slow", budget: .milliseconds(20)) { _, next in
            Thread.sleep(forTimeInterval: 0.06)
            try next()
        }
        registry.before(.beforeCreate, collection: "outer", id: "quick-outer", priority: 0, budget: .milliseconds(30)) { _, next in try next() }
        registry.before(.beforeCreate, collection: "outer", id: "slow-inner", priority: 1, budget: .milliseconds(500)) { _, next in
            Thread.sleep(forTimeInterval: 0.06)
            try next()
        }
        let tx = FakeTransaction()
        #expect { try registry.runBefore(context(tx, collection: "slow")) {} } throws: {
            ($0 as? HookRefusal)?.status == 503 && ($0 as? HookRefusal)?.code == "HookTimeout"
        }
        try registry.runBefore(context(tx, collection: "outer")) { tx.log.append("write") }
        #expect(tx.log == ["write"])
    }

    /// A unit of work that spends time for others (as the PostgreSQL writer sending held creates) when told to.

    /// Built-in hooks only read and write the store: a slow database is not theirs to time. The
    /// same slow hook is refused when the app team's, and goes through when built in.
    @Test func builtInHooksHaveNoBudget() throws {
        let registry = HookRegistry<FakeTransaction>(defaultBudget: .milliseconds(20), logger: logger)
        for (collection, source) in [("theirs", "operator"), ("ours", "built-in")] {
            registry.before(.beforeCreate, collection: collection, id: "slow-store", source: source) { _, next in
                try next()
                Thread.sleep(forTimeInterval: 0.06)
            }
        }
        #expect(registry.registrations.map { $0.budget } == [.milliseconds(20), nil])
        let tx = FakeTransaction()
        #expect { try registry.runBefore(context(tx, collection: "theirs")) {} } throws: {
            ($0 as? HookRefusal)?.code == "HookTimeout"
        }
        try registry.runBefore(context(tx, collection: "ours")) { tx.log.append("write") }
        #expect(tx.log == ["write"])
        #expect(registry.registrations.last?.description.contains("budget=none") == true)
    }
    final class SharedTransaction: @unchecked Sendable, WorkOnOthersBehalf {
        var timeOnOthersBehalf: Duration = .zero
        /// Sleeps `seconds`, counted as others' time when `forOthers`.
        func work(_ seconds: Double, forOthers: Bool) {
            let started = ContinuousClock.now
            Thread.sleep(forTimeInterval: seconds)
            if forOthers { timeOnOthersBehalf += ContinuousClock.now - started }
        }
    }

    /// Time the unit of work spent for others inside a hook is not the hook's;
    /// its own time still is, and others' time inside `next` is not subtracted twice.
    @Test(arguments: [(false, false, true), (true, false, false), (true, true, true)])
    func timeSpentForOthersIsNotTheHooks(forOthers: Bool, alsoOwnWork: Bool, overruns: Bool) throws {
        let registry = HookRegistry<SharedTransaction>(logger: logger)
        registry.before(.beforeCreate, collection: "c", id: "outer", priority: 0, budget: .milliseconds(40)) { ctx, next in
            try next()
            ctx.work.work(0.08, forOthers: forOthers)
            if alsoOwnWork { ctx.work.work(0.08, forOthers: false) }
        }
        registry.before(.beforeCreate, collection: "c", id: "inner", priority: 1, budget: .milliseconds(500)) { ctx, next in
            ctx.work.work(0.08, forOthers: true)
            try next()
        }
        let work = SharedTransaction()
        let ctx = WriteContext(event: .beforeCreate, collection: "c", id: nil, actor: "u1", privileged: false, requestID: "r",
                               work: work, entity: JSONObject())
        if overruns {
            #expect { try registry.runBefore(ctx) {} } throws: { ($0 as? HookRefusal)?.code == "HookTimeout" }
        } else {
            try registry.runBefore(ctx) {}
        }
    }

    @Test func afterHooksRunQueuedInOrderAndSurviveThrowsAndOverruns() throws {
        struct Boom: Error {}
        let registry = HookRegistry<FakeTransaction>(logger: logger)
        let seen = Recorder()
        registry.after(.afterCreate, collection: "messages", id: "second", priority: 2) { c in seen.add("second " + c.requestID) }
        registry.after(.afterCreate, collection: "messages", id: "throws", priority: 1) { _ in seen.add("throws"); throw Boom() }
        registry.after(.afterCreate, collection: "messages", id: "sleeps", priority: 0, budget: .milliseconds(20)) { _ in
            Thread.sleep(forTimeInterval: 1)
            seen.add("woke")
        }
        registry.after(.afterLogin, collection: nil, id: "login") { c in seen.add("login " + (c.actor ?? "")) }
        let queue = AfterHookQueue(registry: registry, threads: 1, logger: logger)
        try queue.start()
        let started = ContinuousClock.now
        queue.dispatch(AfterContext(event: .afterCreate, collection: "messages", actor: "u1", requestID: "r1", entity: JSONObject()))
        queue.dispatch(AfterContext(event: .afterLogin, collection: "users", actor: "u1", requestID: "r2", entity: JSONObject()))
        #expect(ContinuousClock.now - started < .milliseconds(10))  // dispatch never waits
        queue.shutdown()
        // The sleeper overran and was left behind; the rest ran in order.
        #expect(seen.items == ["throws", "second r1", "login u1"])
        #expect(ContinuousClock.now - started < .milliseconds(900))
    }

    @Test func eventsParseAndKnowTheirAfterEvent() {
        #expect(HookEvent(name: "beforeCreate") == .beforeCreate)
        #expect(HookEvent.beforeDelete.after == .afterDelete)
        #expect(HookEvent.afterLogin.pastTense == nil)
        #expect(HookEvent.beforeUpdate.pastTense == "updated")
        #expect(HookEvent(name: "nope") == nil)
    }
}

final class Recorder: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [String] = []
    func add(_ s: String) { lock.lock(); list.append(s); lock.unlock() }
    var items: [String] { lock.lock(); defer { lock.unlock() }; return list }
}
