@testable import Roost
import HTTP
import Testing

/// The real router and handlers, in-process: status, `Allow`, HEAD and error
/// bodies for each kind of path, with no daemon and no socket.
@Suite struct RouterTests {
    struct Case: CustomStringConvertible, Sendable {
        let method: Request.Method
        let target: String
        let status: Int
        var allow: String? = nil
        var code: String? = nil
        var description: String { "\(method.rawValue) \(target)" }
    }

    static let admin = [("Authorization", "Bearer \(RouterFixture.adminToken)")]

    @Test(arguments: [
        Case(method: .get, target: "/healthz", status: 200),
        Case(method: .head, target: "/healthz", status: 200),
        Case(method: .get, target: "/healthz/deeper", status: 200),
        Case(method: .post, target: "/healthz", status: 405, allow: "GET, HEAD", code: "MethodNotAllowed"),
        Case(method: .other, target: "/healthz", status: 405, allow: "GET, HEAD"),
        Case(method: .get, target: "/readyz", status: 200),
        Case(method: .get, target: "/openapi.yaml", status: 200),
        Case(method: .post, target: "/openapi.yaml", status: 405, allow: "GET, HEAD"),
        Case(method: .delete, target: "/metrics", status: 405, allow: "GET, HEAD"),
        Case(method: .post, target: "/", status: 405, allow: "GET, HEAD"),
        Case(method: .head, target: "/events", status: 405, allow: "GET"),
        Case(method: .get, target: "/_batch", status: 405, allow: "POST"),
        Case(method: .get, target: "/login", status: 405, allow: "POST"),
        Case(method: .put, target: "/logout", status: 405, allow: "POST"),
        // Collections and their names.
        Case(method: .get, target: "/items", status: 200),
        Case(method: .head, target: "/items", status: 200),
        Case(method: .get, target: "/items/", status: 200),
        Case(method: .get, target: "//items//", status: 200),
        Case(method: .delete, target: "/items", status: 405, allow: "GET, HEAD, POST"),
        Case(method: .get, target: "/items/_count", status: 200),
        Case(method: .put, target: "/items/_count", status: 405, allow: "GET, HEAD"),
        Case(method: .post, target: "/items/_live", status: 405, allow: "GET"),
        Case(method: .head, target: "/items/_live", status: 405, allow: "GET"),
        Case(method: .post, target: "/items/abc", status: 405, allow: "GET, HEAD, PUT, PATCH, DELETE"),
        Case(method: .get, target: "/items/missing", status: 404, code: "NotFound"),
        Case(method: .get, target: "/items/a%2Fb", status: 404, code: "NotFound"),
        Case(method: .get, target: "/items/a/b", status: 404, code: "NotFound"),
        Case(method: .get, target: "/favicon.ico", status: 404, code: "NotFound"),
        Case(method: .post, target: "/favicon.ico", status: 400, code: "InvalidCollectionName"),
        Case(method: .get, target: "/a%2Fb", status: 404, code: "NotFound"),
        Case(method: .get, target: "/..", status: 404, code: "NotFound"),
        Case(method: .get, target: "/items/..", status: 404, code: "NotFound"),
        Case(method: .get, target: "/" + String(repeating: "a", count: 65), status: 404, code: "NotFound"),
        Case(method: .get, target: "/" + String(repeating: "a/", count: 2000), status: 404, code: "NotFound"),
        Case(method: .get, target: "/_secret", status: 400, code: "ReservedCollectionName"),
        Case(method: .get, target: "/_batch/x", status: 400, code: "ReservedCollectionName"),
        Case(method: .post, target: "/login/x", status: 400, code: "ReservedCollectionName"),
        Case(method: .get, target: "/metrics/x", status: 400, code: "ReservedCollectionName"),
        // Roost's own areas.
        Case(method: .get, target: "/users/a/b", status: 404, code: "NotFound"),
        Case(method: .post, target: "/users/me", status: 405, allow: "GET, HEAD"),
        Case(method: .put, target: "/users/me", status: 405, allow: "GET, HEAD"),
        Case(method: .put, target: "/users/someone", status: 400, code: "InvalidJSON"),  // reached the update handler
        Case(method: .put, target: "/users/_count", status: 405, allow: "GET, HEAD"),
        Case(method: .get, target: "/users/me", status: 401),
        Case(method: .post, target: "/files", status: 400, code: "EmptyBody"),
        Case(method: .get, target: "/files", status: 401, code: "Unauthorized"),  // a user lists their own uploads
        Case(method: .put, target: "/files", status: 405, allow: "GET, HEAD, POST"),
        Case(method: .put, target: "/files/f1", status: 405, allow: "GET, HEAD, DELETE"),
        Case(method: .post, target: "/files/f1/meta", status: 405, allow: "GET, HEAD"),
        Case(method: .get, target: "/files/f1/other", status: 404, code: "NotFound"),
        Case(method: .get, target: "/push", status: 404, code: "NotFound"),
        Case(method: .put, target: "/push/devices", status: 405, allow: "GET, HEAD, POST"),
        Case(method: .get, target: "/push/devices/t1", status: 405, allow: "DELETE"),
        Case(method: .get, target: "/admin", status: 404, code: "NotFound"),
        Case(method: .get, target: "/admin/nothing", status: 404, code: "NotFound"),
        Case(method: .get, target: "/admin/stats", status: 401, code: "Unauthorized"),
        Case(method: .post, target: "/admin/stats", status: 405, allow: "GET, HEAD"),
        Case(method: .post, target: "/admin/users/u1/sessions", status: 405, allow: "GET, HEAD, DELETE"),
        Case(method: .put, target: "/admin/backups", status: 405, allow: "GET, HEAD, POST"),
        Case(method: .get, target: "/admin/webhooks/endpoints/x/enable", status: 405, allow: "POST"),
        Case(method: .get, target: "/admin/webhooks/endpoints/x/disable", status: 405, allow: "POST"),
    ])
    func route(_ c: Case) throws {
        let response = RouterFixture.shared.send(c.method, c.target)
        #expect(response.status == c.status, "\(c): \(response.text)")
        #expect(response.headers["Allow"] == c.allow, "\(c)")
        if let code = c.code { #expect(response.text.contains("\"error\":\"\(code)\""), "\(c): \(response.text)") }
        if c.status >= 400 { #expect(response.headers["Content-Type"]?.hasPrefix("application/json") == true, "\(c)") }
    }

    @Test func adminRoutesAnswerTheAdmin() {
        let fixture = RouterFixture.shared
        #expect(fixture.send(.get, "/admin/stats", headers: Self.admin).status == 200)
        #expect(fixture.send(.get, "/admin/hooks", headers: Self.admin).status == 200)
        #expect(fixture.send(.get, "/admin/webhooks/deliveries?status=nope", headers: Self.admin).status == 400)
        #expect(fixture.send(.get, "/admin/webhooks/deliveries/7", headers: Self.admin).status == 404)
        #expect(fixture.send(.delete, "/admin/users/u1/sessions/s1", headers: Self.admin).status == 404)
    }

    @Test func createThenReadInProcess() throws {
        let fixture = RouterFixture.shared
        let created = fixture.send(.post, "/notes", headers: [("Content-Type", "application/json")], body: #"{"_id":"n1","text":"hi"}"#)
        #expect(created.status == 201, "\(created.text)")
        let read = fixture.send(.get, "/notes/n1")
        #expect(read.status == 200 && read.text.contains("\"text\":\"hi\""), "\(read.text)")
        #expect(fixture.send(.head, "/notes/n1").status == 200)
        #expect(fixture.send(.get, "/notes/_count").text == #"{"count":1}"#)
    }

    /// Every template is declared once: no two routes share one.
    @Test func templatesAreUnique() {
        let templates = RouterFixture.shared.router.table.routes.map(\.template)
        #expect(Set(templates).count == templates.count)
    }
}
