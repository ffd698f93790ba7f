import Foundation
import HTTP
import Jobs
import JSON
import Store
import Testing
@testable import EventLoop
@testable import Roost

/// Every route kind gets its caller from the job seam (`CallerJobs`): one
/// table of routes × (no token, a bad token, a user's, the admin's), and
/// proof that a handler is never entered for a request whose token is bad.
@Suite struct CallerSeamTests {
    /// Who sends a request.
    enum Who: String, CaseIterable, Sendable { case nobody, badToken, user, admin }

    struct Case: CustomStringConvertible, Sendable {
        let method: Request.Method
        let target: String
        var body: String = ""
        var contentType = "application/json"
        /// False for a public route, which never looks a token up.
        var looksUp = true
        /// Expected status for nobody, a bad token, a user and the admin.
        let statuses: [Int]
        var description: String { "\(method.rawValue) \(target)" }
    }

    static let badToken = "not-a-session-token"
    static let fileID = "0123456789abcdef01234567"

    /// A signed-up user of the shared fixture: (id, token).
    static let user: (id: String, token: String) = {
        let name = "seam-\(UInt32.random(in: 0...UInt32.max))"
        let response = RouterFixture.shared.send(.post, "/users", headers: [("Content-Type", "application/json")],
                                                 body: #"{"username":"\#(name)","password":"correct horse battery"}"#)
        guard response.status == 201, case .object(let o)? = try? JSONParser.parse(response.body),
              case .string(let token)? = o["token"], case .object(let user)? = o["user"], case .string(let id)? = user["_id"] else {
            fatalError("sign-up failed: \(response.status) \(response.text)")
        }
        return (id, token)
    }()

    static func headers(_ who: Who, contentType: String) -> [(String, String)] {
        let token: String? = switch who {
        case .nobody: nil
        case .badToken: badToken
        case .user: user.token
        case .admin: RouterFixture.adminToken
        }
        return [("Content-Type", contentType)] + (token.map { [("Authorization", "Bearer \($0)")] } ?? [])
    }

    // `items` is public in the fixture, `users` and `files` are shared.
    @Test(arguments: [
        // Public routes look nothing up: a bad token changes nothing.
        Case(method: .get, target: "/healthz", looksUp: false, statuses: [200, 200, 200, 200]),
        // metrics_access: local, and the fixture's requests come from no loopback address: the admin token only.
        Case(method: .get, target: "/metrics", looksUp: false, statuses: [403, 403, 403, 200]),
        Case(method: .get, target: "/", statuses: [200, 200, 200, 200]),  // the status page ignores a bad token
        Case(method: .post, target: "/login", body: #"{"username":"nobody-here","password":"wrong password"}"#,
             looksUp: false, statuses: [401, 401, 401, 401]),  // InvalidCredentials, whatever the token
        // Collections: reads on a reader with the caller's scope.
        Case(method: .get, target: "/items", statuses: [200, 401, 200, 200]),
        Case(method: .get, target: "/items/_count", statuses: [200, 401, 200, 200]),
        Case(method: .get, target: "/items/missing", statuses: [404, 401, 404, 404]),
        Case(method: .get, target: "/items/_deltaset", statuses: [200, 401, 200, 200]),
        Case(method: .get, target: "/users", statuses: [401, 401, 200, 200]),
        // Collection writes: the caller found on a reader (or none, on the loop) before the writer.
        Case(method: .post, target: "/items", body: #"{"seam":true}"#, statuses: [201, 401, 201, 201]),
        Case(method: .delete, target: "/items/missing", statuses: [404, 401, 404, 404]),
        Case(method: .post, target: "/_batch", body: #"{"operations":[{"method":"POST","path":"/items","body":{"seam":1}}]}"#,
             statuses: [200, 401, 200, 200]),
        // Accounts.
        Case(method: .get, target: "/users/me", statuses: [401, 401, 200, 401]),
        Case(method: .patch, target: "/users/someone-else", body: #"{"bio":"x"}"#, statuses: [401, 401, 403, 404]),
        Case(method: .delete, target: "/users/someone-else", statuses: [401, 401, 403, 404]),
        // Push: a reader for the list and the register, the writer itself for the delete.
        Case(method: .get, target: "/push/devices", statuses: [401, 401, 200, 403]),
        Case(method: .post, target: "/push/devices", body: #"{"platform":"ios","token":"5eade71ce0"}"#, statuses: [401, 401, 201, 403]),
        Case(method: .delete, target: "/push/devices/none-such", statuses: [401, 401, 404, 404]),
        // Files: serve paths on a reader, the upload on its pool, the delete on the writer.
        Case(method: .get, target: "/files/\(fileID)", statuses: [401, 401, 404, 404]),
        Case(method: .get, target: "/files/\(fileID)/meta", statuses: [401, 401, 404, 404]),
        Case(method: .get, target: "/files/\(fileID)/thumbnail", statuses: [401, 401, 404, 404]),
        Case(method: .get, target: "/files/\(fileID)/thumbnail?size=oops", statuses: [401, 401, 404, 404]),  // who, then what
        Case(method: .delete, target: "/files/\(fileID)", statuses: [401, 401, 404, 404]),
        Case(method: .post, target: "/files", body: "plain text", contentType: "text/plain", statuses: [401, 401, 201, 201]),
        // The admin gate, on a reader for reads and writes alike.
        Case(method: .get, target: "/admin/stats", statuses: [401, 401, 403, 200]),
        Case(method: .get, target: "/admin/backups", statuses: [401, 401, 403, 200]),
        Case(method: .get, target: "/admin/logs?level=bogus", statuses: [401, 401, 403, 400]),
        Case(method: .get, target: "/admin/webhooks/deliveries?status=bogus", statuses: [401, 401, 403, 400]),
        Case(method: .post, target: "/admin/webhooks/endpoints", body: "{}", statuses: [401, 401, 403, 400]),
    ])
    func callers(_ c: Case) {
        for (who, expected) in zip(Who.allCases, c.statuses) {
            let response = RouterFixture.shared.send(c.method, c.target, headers: Self.headers(who, contentType: c.contentType),
                                                     body: c.body)
            #expect(response.status == expected, "\(c) as \(who.rawValue): \(response.text)")
            if who == .badToken && !c.looksUp {
                #expect(response.body != Authenticator.invalidToken.response.body, "\(c): \(response.text)")
            }
            if who == .badToken && expected == 401 && c.looksUp {
                // The same 401 wherever a bad token is sent.
                #expect(response.body == Authenticator.invalidToken.response.body, "\(c): \(response.text)")
                #expect(response.headers["WWW-Authenticate"] == #"Bearer realm="roost", error="invalid_token""#, "\(c)")
            }
        }
    }

    /// A live stream refused for its token gives its reserved place back:
    /// more refusals than one address may hold streams never become a 429.
    @Test func refusedStreamsReleaseTheirPlace() {
        let fixture = RouterFixture.shared
        for _ in 0...RoostConfig().liveMaxPerAddress {
            let response = fixture.send(.get, "/items/_live", headers: Self.headers(.badToken, contentType: "application/json"))
            #expect(response.status == 401, "\(response.text)")
            if response.status != 401 { break }
        }
    }

    /// The seam answers a bad token itself: the handler is never entered.
    @Test func handlerNeverEnteredForABadToken() {
        let jobs = RouterFixture.shared.jobs
        let entered = LockedBox(0)
        let request = Self.request(.get, headers: [("Authorization", "Bearer \(Self.badToken)")])
        let responses: [Response] = [
            Self.await { out in jobs.read(request, out) { _, _ in entered.set(entered.get() + 1); return .json(200, "{}") } },
            Self.await { out in jobs.read(request, out, in: "items") { _, _ in entered.set(entered.get() + 1); return .json(200, "{}") } },
            Self.await { out in jobs.write(request, out) { _, _ in entered.set(entered.get() + 1); return .json(200, "{}") } },
            Self.await { out in
                jobs.write(request, out, prepare: { _ in entered.set(entered.get() + 1) }) { _, _ in
                    entered.set(entered.get() + 1)
                    return .json(200, "{}")
                }
            },
            Self.await { out in jobs.readAsAdmin(request, out) { _ in entered.set(entered.get() + 1); return .json(200, "{}") } },
            Self.await { out in jobs.writeAsAdmin(request, out) { _ in entered.set(entered.get() + 1); return .json(200, "{}") } },
        ]
        for response in responses {
            #expect(response.status == 401 && response.body == Authenticator.invalidToken.response.body, "\(response.text)")
        }
        #expect(entered.get() == 0)
        // The same steps with a good token do enter, and see who asked.
        let admin = Self.request(.get, headers: [("Authorization", "Bearer \(RouterFixture.adminToken)")])
        let seen = LockedBox<AccessScope.Principal?>(nil)
        let ok = Self.await { out in jobs.read(admin, out) { _, caller in seen.set(caller.principal); return .json(200, "{}") } }
        #expect(ok.status == 200 && seen.get() == .admin)
    }

    /// A failed step runs `failed` once; a good one does not.
    @Test func failedRunsOnlyOnRefusal() {
        let jobs = RouterFixture.shared.jobs
        let failures = LockedBox(0)
        let bad = Self.request(.get, headers: [("Authorization", "Bearer \(Self.badToken)")])
        _ = Self.await { out in jobs.read(bad, out, failed: { failures.set(failures.get() + 1) }) { _, _ in .json(200, "{}") } }
        #expect(failures.get() == 1)
        _ = Self.await { out in jobs.read(Self.request(.get), out, failed: { failures.set(failures.get() + 1) }) { _, _ in .json(200, "{}") } }
        #expect(failures.get() == 1)
        _ = Self.await { out in
            jobs.read(Self.request(.get), out, failed: { failures.set(failures.get() + 1) }) { _, _ in throw HTTPError.notFound("no") }
        }
        #expect(failures.get() == 2)
    }

    static func request(_ method: Request.Method, headers: [(String, String)] = []) -> Request {
        Request(method: method, path: "/seam", segments: ["seam"], query: [:],
                headers: Headers(headers.map { (name: $0.0, value: $0.1) }), body: [], requestID: "seam")
    }

    /// Runs `start` with a capturing writer and waits for its one response.
    static func await(_ start: (ResponseWriter) -> Void) -> Response {
        let done = DispatchSemaphore(value: 0)
        let box = LockedBox<Response?>(nil)
        start(ResponseWriter(capturing: { response in box.set(response); done.signal() }))
        done.wait()
        return box.get()!
    }
}
