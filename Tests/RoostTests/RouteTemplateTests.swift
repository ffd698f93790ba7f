@testable import Roost
import Testing

/// Paths become bounded metric labels: ids and collection names never leak in.
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
        (["files", "_deltaset"], "/files/_deltaset"),
        (["events"], "/events"),
        (["_batch"], "/_batch"),
        (["_", "assets", "x.js"], "/_/*"),
        (["_secret"], "/_reserved"),
    ] as [([String], String)])
    func template(segments: [String], expected: String) {
        #expect(RouteTemplate.of(segments) == expected)
    }
}
