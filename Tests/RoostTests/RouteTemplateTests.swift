@testable import Roost
import HTTP
import Testing

/// Paths become bounded metric labels (the owning route's template): ids and
/// collection names never leak in.
@Suite struct RouteTemplateTests {
    @Test(arguments: [
        ([], "/"),
        (["items"], "/:collection"),
        (["items", "abc"], "/:collection/:id"),
        (["items", "_count"], "/:collection/_count"),
        (["items", "_deltaset"], "/:collection/_deltaset"),
        (["items", "_live"], "/:collection/_live"),
        (["items", "a", "b"], "/:collection/*"),
        (["users", "me"], "/users/me"),
        (["users", "u1"], "/users/:id"),
        (["users", "_live"], "/users/_live"),
        (["users", "a", "b"], "/users/*"),
        (["files", "_deltaset"], "/files/_deltaset"),
        (["files", "f1", "meta"], "/files/:id/meta"),
        (["events"], "/events"),
        (["_batch"], "/_batch"),
        (["_", "assets", "x.js"], "/_/*"),
        (["_secret"], "/:collection"),
        (["login", "x"], "/:collection/:id"),
        (["admin", "users", "u1", "sessions"], "/admin/users/:id/sessions"),
        (["admin", "nothing"], "/admin/*"),
        (["healthz", "deep"], "/healthz/*"),
    ] as [([String], String)])
    func template(segments: [String], expected: String) throws {
        #expect(try RouterFixture.shared.router.table.match(segments).label == expected)
    }
}

/// Handlers read path parameters by the names their template declares.
@Suite struct RouteParameterTests {
    @Test(arguments: [
        (["items", "abc"], ["collection": "items", "id": "abc"]),
        (["users", "u1"], ["id": "u1"]),
        (["admin", "users", "u1", "sessions", "s9"], ["id": "u1", "sid": "s9"]),
        (["admin", "webhooks", "endpoints", "hook-a", "enable"], ["name": "hook-a"]),
        (["push", "devices", "tok"], ["token": "tok"]),
    ] as [([String], [String: String])])
    func parameters(segments: [String], expected: [String: String]) throws {
        let route = try #require(RouterFixture.shared.router.table.match(segments).route)
        let request = Request(method: .get, path: "/" + segments.joined(separator: "/"), segments: segments, query: [:],
                              headers: Headers(), body: [], requestID: "t").matched(route)
        #expect(request.routeTemplate == route.template)
        #expect(Set(route.parameters.keys) == Set(expected.keys))
        for (name, value) in expected { #expect(request.parameter(name) == value) }
    }
}
