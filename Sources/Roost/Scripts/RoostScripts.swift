import EventLoop
import Foundation
import HTTP
import Hooks
import JSON
import Jobs
import Daemon
import Logging
import Metrics
import Scripts
import Store

/// The operator's Lua scripts in the running daemon: the runtime (loaded
/// set, one state per thread), the scripts pool that runs after hooks,
/// `/fn/` functions and jobs (each thread with its own state and reader),
/// and the SIGHUP reload.
final class RoostScripts: AfterScripts, @unchecked Sendable {
    /// A scripts thread's own: a reader connection, opened at the thread's
    /// first call, so a node whose scripts register no function, job or
    /// after hook holds no connection for them (its Lua state is the runtime's per thread).
    final class Worker {
        private let open: () throws -> any DocumentReading
        private var opened: (any DocumentReading)?
        init(open: @escaping () throws -> any DocumentReading) { self.open = open }

        /// The thread's reader (opened now if this is its first use; a failure is retried at the next).
        func reader() throws -> any DocumentReading {
            if let opened { return opened }
            let reader = try open()
            opened = reader
            return reader
        }
    }

    typealias Job = @Sendable (Worker) -> Void

    let runtime: ScriptRuntime
    let pools: StorePools
    let access: AccessPolicy
    /// The hook path the scripts' writes take. The one binding made after
    /// construction (`ServerComposition`, before anything starts): the hooks
    /// run scripts and the scripts write through the hooks.
    let hooks = LockedBox<HookServices?>(nil)
    let logger: Logger
    let pool: WorkerPool<Worker, Job>
    /// The scheduled jobs' clock (started with the pool).
    private(set) var scheduler: ScriptScheduler?

    init(config: RoostConfig, pools: StorePools, access: AccessPolicy, logger: Logger) {
        let metrics = ScriptMetrics()
        runtime = ScriptRuntime(limits: config.scriptLimits, environment: config.scriptEnvironment,
                                httpAllow: config.scripts.httpAllow, logger: logger,
                                observe: { kind, outcome, nanoseconds in metrics.record(kind: kind, outcome: outcome, nanoseconds: nanoseconds) })
        self.pools = pools
        self.access = access
        self.logger = logger
        let engine = pools.engine
        pool = WorkerPool(name: "scripts", threads: config.scripts.workers, capacity: 1024, logger: logger,
                          makeContext: { Worker(open: { try engine.openReader(role: "scripts") }) },
                          run: { worker, jobs in for job in jobs { job(worker) } })
    }

    /// Loads `directory` (a failure stops the start, with file:line) and starts the pool.
    func start(directory: String, node: String) throws {
        let set = try runtime.reload(directory: directory)
        if !set.files.isEmpty {
            logger.info("scripts loaded", metadata: ["dir": "\(directory)", "files": "\(set.files.count)", "handlers": "\(set.registrations.count)"])
        }
        try pool.start()
        let scheduler = ScriptScheduler(scripts: self, node: node, logger: logger)
        self.scheduler = scheduler
        scheduler.start()
    }

    /// Stops the jobs' clock (a running job finishes), then the pool.
    func shutdown() {
        scheduler?.stop()
        pool.shutdown()
    }

    /// SIGHUP: all scripts compile and load, or the running set stays (logged with file:line).
    func reload(directory: String) -> String? {
        do {
            let set = try runtime.reload(directory: directory)
            return "scripts: \(set.files.count) files, \(set.registrations.count) handlers"
        } catch {
            logger.error("scripts reload failed; keeping the running scripts", metadata: ["error": "\(error)"])
            return nil
        }
    }

    static func verb(_ event: HookEvent) -> String? {
        switch event {
        case .afterCreate: return "create"
        case .afterUpdate: return "update"
        case .afterDelete: return "delete"
        case .afterLogin: return "login"
        default: return nil
        }
    }

    func hasAfterHooks(_ event: HookEvent, _ collection: String) -> Bool {
        guard let verb = Self.verb(event) else { return false }
        return !runtime.current.hooks(.after, verb, collection).isEmpty
    }

    /// Queues the scripts' after hooks of committed writes; a full queue drops them (logged).
    func dispatchAfter(_ contexts: [AfterContext]) {
        let set = runtime.current
        for context in contexts {
            guard let verb = Self.verb(context.event) else { continue }
            let indices = set.hooks(.after, verb, context.collection)
            guard !indices.isEmpty else { continue }
            let (runtime, scripts) = (self.runtime, self)
            let logger = self.logger
            let accepted = pool.submit { worker in
                let reader: any DocumentReading
                do { reader = try worker.reader() } catch {
                    logger.error("scripts cannot open a reader; after hooks dropped",
                                 metadata: ["request_id": "\(context.requestID)", "error": "\(error)"])
                    return
                }
                let principal: AccessScope.Principal = context.actor.map { .user($0) } ?? .anonymous
                let services = WorkerScriptServices(scripts: scripts, reader: reader, principal: principal, roles: context.actorRoles,
                                                    requestID: context.requestID)
                let call = ScriptCall(requestID: context.requestID, caller: ScriptCaller(id: context.actor, admin: false), services: services)
                for index in indices {
                    runtime.after(index, set: set, event: verb, collection: context.collection, entity: context.entity, call: call)
                }
            }
            if !accepted {
                logger.error("scripts queue full; after hooks dropped", metadata: ["request_id": "\(context.requestID)"])
            }
        }
    }

    /// The script handlers, one line each with their counts, for `roostd hooks` and `GET /admin/hooks`.
    var listing: [JSONObject] {
        let set = runtime.current
        let stats = set.stats.all
        return set.registrations.enumerated().map { i, r in
            var o = JSONObject()
            o["kind"] = .string(r.kind.rawValue)
            if !r.event.isEmpty { o[r.kind == .route ? "method" : "event"] = .string(r.event) }
            o[r.kind == .route ? "name" : (r.kind == .before || r.kind == .after ? "collection" : "schedule")] = .string(r.target)
            o["location"] = .string(r.location)
            o["calls"] = .int(Int64(stats[i].calls))
            o["errors"] = .int(Int64(stats[i].errors))
            o["timeouts"] = .int(Int64(stats[i].timeouts))
            o["totalMs"] = .double(Double(stats[i].nanoseconds) / 1e6)
            return o
        }
    }
}

extension RoostScripts {
    /// The route of the scripts' functions: `/fn/<name>` for each method a script registered.
    func routes(maxBodyBytes: Int) -> [RoostRoute] {
        let handle: RouteHandler = { [self] r, out in function(r, out, maxBodyBytes: maxBodyBytes) }
        return [
            RoostRoute("/fn/:name", [.get: handle, .post: handle, .put: handle, .patch: handle, .delete: handle]),
            RoostRoute("/fn/*", anyMethod: Router.noEndpoint),
        ]
    }

    /// `/fn/<name>`: the caller is authenticated as for any route (on the
    /// scripts thread, with its reader), the JSON body parsed there, and the
    /// function's status and JSON returned. A function that fails answers
    /// 503 HookTimeout or 500 ScriptError; the traceback goes to the log.
    func function(_ request: Request, _ out: ResponseWriter, maxBodyBytes: Int) {
        let name = request.segments[1]
        let set = runtime.current
        guard let index = set.route(request.method.rawValue, name) else {
            let error = set.hasRoute(named: name)
                ? HTTPError(.methodNotAllowed, "/fn/\(name) does not answer \(request.method.rawValue).")
                : HTTPError.notFound("No function /fn/\(name): no script registers it.")
            return out.send(error.response)
        }
        guard request.body.count <= maxBodyBytes else { return out.send(HTTPError.tooLarge(limit: maxBodyBytes).response) }
        if !request.body.isEmpty, let type = ContentNegotiation.mediaType(request.headers["Content-Type"]), type != "application/json" {
            return out.send(HTTPError.unsupportedMediaType("Send the body as application/json (got \(type)).").response)
        }
        let (runtime, access, logger, scripts) = (self.runtime, self.access, self.logger, self)
        pool.submit({ worker in
            out.send(ErrorResponses.catching(request, logger) {
                let reader = try worker.reader()
                let caller = try access.caller(request, reader)
                var body = JSONValue.null
                if !request.body.isEmpty {
                    do { body = try JSONParser.parse(request.body) } catch {
                        throw HTTPError(.invalidJSON, "The body is not valid JSON: \(error)")
                    }
                }
                var req = JSONObject()
                req["method"] = .string(request.method.rawValue)
                req["name"] = .string(name)
                req["body"] = body
                req["query"] = .object(JSONObject(request.query.sorted { $0.key < $1.key }.map { (key: $0.key, value: .string($0.value)) }))
                req["request_id"] = .string(request.requestID)
                let principal = caller.principal
                let services = WorkerScriptServices(scripts: scripts, reader: reader, principal: principal, roles: caller.roles,
                                                    requestID: request.requestID)
                let call = ScriptCall(requestID: request.requestID, caller: ScriptCaller(id: principal.userID, admin: principal == .admin),
                                      services: services)
                do throws(ScriptFailure) {
                    let (status, answer) = try runtime.function(index, set: set, request: req, call: call)
                    return .json(status, answer.jsonText)
                } catch {
                    switch ScriptHooks.answer(error) {
                    case let refusal as HookRefusal: throw refusal.httpError
                    case let other: throw other
                    }
                }
            })
        }, orAnswer: out, .reads)
    }
}

extension RoostScripts {
    /// Runs `operation` alone in the writer's next group commit and waits for its result.
    func commit<T: Sendable>(_ operation: @escaping @Sendable (any DocumentWriting) throws -> T) throws -> T {
        let done = DispatchSemaphore(value: 0)
        let outcome = LockedBox<Result<T, any Error>?>(nil)
        guard pools.writer.submit(StorePools.WriteJob(operation: operation, completion: { outcome.set($0); done.signal() })) else {
            throw Overload.writes.error
        }
        done.wait()
        return try outcome.get()!.get()
    }
}

/// The scripts' counters and timers, made once per label set and kept: a
/// metric made for each call costs the factory's lookup every time (measured:
/// about a third of a trivial before hook's cost on the writer).
final class ScriptMetrics: @unchecked Sendable {
    private let lock = NSLock()
    private var counters: [String: Counter] = [:]
    private var timers: [String: Metrics.Timer] = [:]

    func record(kind: String, outcome: String, nanoseconds: UInt64) {
        let key = kind + " " + outcome
        lock.lock()
        let counter: Counter
        if let made = counters[key] { counter = made } else {
            counter = RoostMetrics.scriptCalls(kind: kind, outcome: outcome)
            counters[key] = counter
        }
        let timer: Metrics.Timer
        if let made = timers[kind] { timer = made } else {
            timer = RoostMetrics.scriptTimer(kind: kind)
            timers[kind] = timer
        }
        lock.unlock()
        counter.increment()
        timer.recordNanoseconds(Int64(nanoseconds))
    }
}
