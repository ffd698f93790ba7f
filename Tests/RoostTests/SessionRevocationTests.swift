import Foundation
import HTTP
import Jobs
import JSON
import Store
import Testing
@testable import EventLoop
@testable import Roost

/// A revoked token is refused by the job seam on the very next request,
/// whatever the route; a batch runs as its own caller only.
@Suite struct SessionRevocationTests {
    /// A new user of the shared fixture: (id, token).
    static func signUp(_ name: String) -> (id: String, token: String) {
        let response = RouterFixture.shared.send(.post, "/users", headers: [("Content-Type", "application/json")],
                                                 body: #"{"username":"\#(name)-\#(UInt32.random(in: 0...UInt32.max))","password":"correct horse battery"}"#)
        guard response.status == 201, case .object(let o)? = try? JSONParser.parse(response.body),
              case .string(let token)? = o["token"], case .object(let user)? = o["user"], case .string(let id)? = user["_id"] else {
            fatalError("sign-up failed: \(response.status) \(response.text)")
        }
        return (id, token)
    }

    static func id(_ response: Response) -> String {
        guard case .object(let o)? = try? JSONParser.parse(response.body), case .string(let id)? = o["_id"] else {
            fatalError("no _id: \(response.status) \(response.text)")
        }
        return id
    }

    /// Every route kind, sent with a token that was just revoked: 401 InvalidToken each.
    @Test(arguments: ["logout", "admin"])
    func revokedTokenIsRefusedEverywhere(_ how: String) {
        let fixture = RouterFixture.shared
        let user = Self.signUp("revoked")
        let auth = ("Authorization", "Bearer \(user.token)")
        let json = ("Content-Type", "application/json")
        let item = Self.id(fixture.send(.post, "/items", headers: [auth, json], body: #"{"owner":"me"}"#))
        let file = Self.id(fixture.send(.post, "/files", headers: [auth, ("Content-Type", "text/plain")], body: "mine"))
        #expect(fixture.send(.get, "/files/\(file)", headers: [auth]).status == 200)
        let revoked = how == "logout"
            ? fixture.send(.post, "/logout", headers: [auth])
            : fixture.send(.delete, "/admin/users/\(user.id)/sessions", headers: [("Authorization", "Bearer \(RouterFixture.adminToken)")])
        #expect(revoked.status == 200, "\(revoked.text)")
        let requests: [(Request.Method, String, String, String)] = [
            (.get, "/users/me", "", "application/json"),
            (.get, "/items", "", "application/json"),
            (.get, "/items/\(item)", "", "application/json"),
            (.get, "/items/_deltaset", "", "application/json"),
            (.get, "/items/_live", "", "application/json"),
            (.get, "/events?subscribe=%5B%7B%22collection%22%3A%22items%22%7D%5D", "", "application/json"),
            (.post, "/items", #"{"after":"revocation"}"#, "application/json"),
            (.patch, "/items/\(item)", #"{"after":"revocation"}"#, "application/json"),
            (.delete, "/items/\(item)", "", "application/json"),
            (.post, "/_batch", #"{"operations":[{"method":"DELETE","path":"/items/\#(item)"}]}"#, "application/json"),
            (.patch, "/users/\(user.id)", #"{"bio":"after"}"#, "application/json"),
            (.get, "/files/\(file)", "", "application/json"),
            (.head, "/files/\(file)", "", "application/json"),
            (.get, "/files/\(file)/meta", "", "application/json"),
            (.get, "/files/\(file)/thumbnail?size=oops", "", "application/json"),
            (.delete, "/files/\(file)", "", "application/json"),
            (.post, "/files", "more", "text/plain"),
            (.get, "/push/devices", "", "application/json"),
            (.post, "/push/devices", #"{"platform":"ios","token":"after-revocation"}"#, "application/json"),
            (.delete, "/users/\(user.id)", "", "application/json"),
        ]
        for (method, target, body, type) in requests {
            let response = fixture.send(method, target, headers: [auth, ("Content-Type", type)], body: body)
            #expect(response.status == 401 && response.body == Authenticator.invalidToken.response.body,
                    "\(how): \(method.rawValue) \(target): \(response.status) \(response.text)")
        }
        // Nothing was written with it.
        let admin = ("Authorization", "Bearer \(RouterFixture.adminToken)")
        #expect(fixture.send(.get, "/items/\(item)", headers: [admin]).text.contains(#""owner":"me""#))
        #expect(!fixture.send(.get, "/items/\(item)", headers: [admin]).text.contains("revocation"))
        #expect(fixture.send(.get, "/files/\(file)/meta", headers: [admin]).status == 200)
        #expect(fixture.send(.get, "/users/\(user.id)", headers: [admin]).status == 200)
    }

    /// An operation of a batch cannot name its own caller: the batch's is the only one.
    @Test func batchOperationsCannotCarryCredentials() {
        let user = Self.signUp("batcher")
        let body = #"{"operations":[{"method":"POST","path":"/items","body":{"x":1},"headers":{"Authorization":"Bearer \#(RouterFixture.adminToken)"}}]}"#
        let response = RouterFixture.shared.send(.post, "/_batch", headers: [("Authorization", "Bearer \(user.token)"),
                                                                              ("Content-Type", "application/json")], body: body)
        #expect(response.status == 400, "\(response.text)")
    }

    /// A write's caller is found on a reader; the session may end before the
    /// writer runs it. Then the write is refused too (a revoked session writes nothing).
    @Test func writeWhoseSessionEndsBeforeTheWriterIsRefused() {
        let fixture = RouterFixture.shared
        let jobs = fixture.jobs
        let user = Self.signUp("racer")
        let request = CallerSeamTests.request(.post, headers: [("Authorization", "Bearer \(user.token)")])
        let wrote = LockedBox(false)
        let response = CallerSeamTests.await { out in
            jobs.write(request, out, prepare: { _ in
                // The log-out commits after the reader found the caller, before the writer runs the write.
                let loggedOut = fixture.send(.post, "/logout", headers: [("Authorization", "Bearer \(user.token)")])
                #expect(loggedOut.status == 200)
            }) { _, _ in
                wrote.set(true)
                return .json(200, "{}")
            }
        }
        #expect(response.status == 401 && response.body == Authenticator.invalidToken.response.body && !wrote.get(),
                "\(response.status) \(response.text)")
    }
}
