import RoostTestSupport
import Foundation
import Testing

/// Bad input gets a JSON error with a fitting status, and the daemon keeps serving.
@Suite struct APIErrorTests {
    struct Case: Sendable, CustomStringConvertible {
        let description: String
        let method: String
        let path: String
        var headers: [String: String] = ["Content-Type": "application/json"]
        var body: String? = nil
        let status: Int
        let error: String
        var mentions: String? = nil
    }

    static let cases: [Case] = [
        Case(description: "malformed JSON body", method: "POST", path: "/notes", body: "{\"a\":", status: 400, error: "InvalidJSON"),
        Case(description: "body that is not an object", method: "POST", path: "/notes", body: "[1,2]", status: 400, error: "InvalidJSON"),
        Case(description: "empty body", method: "POST", path: "/notes", body: "", status: 400, error: "InvalidJSON"),
        Case(description: "field starting with $", method: "POST", path: "/notes", body: "{\"$set\":1}", status: 400, error: "InvalidDocument"),
        Case(description: "non-string _id", method: "POST", path: "/notes", body: "{\"_id\":5}", status: 400, error: "InvalidDocument"),
        Case(description: "wrong content type", method: "POST", path: "/notes", headers: ["Content-Type": "text/plain"], body: "{}", status: 415, error: "UnsupportedMediaType"),
        Case(description: "malformed query JSON", method: "GET", path: "/notes?query=%7Bnope", status: 400, error: "InvalidQuery"),
        Case(description: "$where is refused", method: "GET", path: "/notes?query=%7B%22%24where%22%3A%22sleep(1)%22%7D", status: 400, error: "UnsupportedOperator", mentions: "$where"),
        Case(description: "$expr is refused", method: "GET", path: "/notes?query=%7B%22%24expr%22%3A%7B%7D%7D", status: 400, error: "UnsupportedOperator", mentions: "$expr"),
        Case(description: "$function is refused", method: "GET", path: "/notes/_count?query=%7B%22a%22%3A%7B%22%24function%22%3A1%7D%7D", status: 400, error: "UnsupportedOperator", mentions: "$function"),
        Case(description: "unknown operator is named", method: "GET", path: "/notes?query=%7B%22a%22%3A%7B%22%24bogus%22%3A1%7D%7D", status: 400, error: "UnsupportedOperator", mentions: "$bogus"),
        Case(description: "bad sort direction", method: "GET", path: "/notes?sort=%7B%22a%22%3A2%7D", status: 400, error: "InvalidQuery"),
        Case(description: "limit above the maximum", method: "GET", path: "/notes?limit=100000", status: 400, error: "InvalidQuery"),
        Case(description: "negative skip", method: "GET", path: "/notes?skip=-1", status: 400, error: "InvalidQuery"),
        Case(description: "$nearSphere inside $elemMatch", method: "GET", path: "/notes?query=%7B%22a%22%3A%7B%22%24elemMatch%22%3A%7B%22p%22%3A%7B%22%24nearSphere%22%3A%5B0%2C0%5D%7D%7D%7D%7D", status: 400, error: "InvalidQuery"),
        Case(description: "a made-up after cursor", method: "GET", path: "/notes?after=bm90LWEtY3Vyc29y", status: 400, error: "InvalidQuery"),
        Case(description: "explain without the admin token", method: "GET", path: "/notes?explain=true", status: 403, error: "Forbidden"),
        Case(description: "missing document", method: "GET", path: "/notes/nope", status: 404, error: "NotFound"),
        Case(description: "patch of a missing document", method: "PATCH", path: "/notes/nope", body: "{}", status: 404, error: "NotFound"),
        Case(description: "delete of a missing document", method: "DELETE", path: "/notes/nope", status: 404, error: "NotFound"),
        Case(description: "method not allowed on a collection", method: "DELETE", path: "/notes", status: 405, error: "MethodNotAllowed"),
        Case(description: "deep path", method: "GET", path: "/notes/a/b", status: 404, error: "NotFound"),
        Case(description: "live stream without a subscription", method: "GET", path: "/events", status: 400, error: "InvalidQuery"),
        Case(description: "reserved underscore name (GET)", method: "GET", path: "/_hidden", status: 400, error: "ReservedCollectionName"),
        Case(description: "underscore collection name", method: "POST", path: "/_secret", body: "{}", status: 400, error: "ReservedCollectionName"),
        Case(description: "malformed collection name in a write", method: "POST", path: "/9lives", status: 400, error: "InvalidCollectionName"),
        Case(description: "a path that cannot be a collection, read (/favicon.ico)", method: "GET", path: "/favicon.ico", status: 404, error: "NotFound"),
        Case(description: "_id in body differs from URL", method: "PUT", path: "/notes/a", body: "{\"_id\":\"b\"}", status: 400, error: "InvalidDocument"),
    ]

    @Test func errorsAreJSONWithFittingStatus() throws {
        let roost = try RoostProcess()
        for c in Self.cases {
            let r = try HTTP.send(c.method, roost.baseURL + c.path, headers: c.headers, body: c.body.map { Data($0.utf8) })
            #expect(r.status == c.status, "\(c.description): \(r.text)")
            #expect(r.object["error"] as? String == c.error, "\(c.description): \(r.text)")
            #expect((r.object["description"] as? String)?.isEmpty == false, "\(c.description)")
            if let m = c.mentions { #expect(r.text.contains(m), "\(c.description): \(r.text)") }
            #expect(r.header("X-Request-Id") != nil)
        }
        let health = try HTTP.send("GET", roost.baseURL + "/healthz")
        #expect(health.status == 200)
    }

    @Test func duplicateIDIsAConflictAndKeepsTheOriginal() throws {
        let roost = try RoostProcess()
        let first = try HTTP.json("POST", roost.baseURL + "/notes", ["_id": "alice:bob", "v": 1])
        #expect(first.status == 201)
        #expect(first.object["_id"] as? String == "alice:bob")
        let second = try HTTP.json("POST", roost.baseURL + "/notes", ["_id": "alice:bob", "v": 2])
        #expect(second.status == 409)
        #expect(second.object["error"] as? String == "Conflict")
        let stored = try HTTP.send("GET", roost.baseURL + "/notes/alice:bob")
        #expect(stored.object["v"] as? Int == 1)
    }

    @Test func oversizedBodyIs413AndNothingIsStored() throws {
        let roost = try RoostProcess(config: "max_body_bytes: 4096\n")
        let big = "{\"blob\":\"" + String(repeating: "x", count: 10_000) + "\"}"
        let r = try HTTP.send("POST", roost.baseURL + "/notes", headers: ["Content-Type": "application/json"], body: Data(big.utf8))
        #expect(r.status == 413)
        #expect(r.object["error"] as? String == "PayloadTooLarge")
        let count = try HTTP.send("GET", roost.baseURL + "/notes/_count")
        #expect(count.object["count"] as? Int == 0)
    }

    @Test func putCreatesPatchMergesDeleteRemoves() throws {
        let roost = try RoostProcess()
        let url = roost.baseURL + "/notes/n1"
        let created = try HTTP.json("PUT", url, ["title": "t", "meta": ["a": 1, "b": 2]])
        #expect(created.status == 201)
        let createdAt = created.object["_createdAt"] as? String
        let patched = try HTTP.json("PATCH", url, ["meta": ["a": NSNull(), "c": 3], "title": "u"],
                                          headers: ["Content-Type": "application/merge-patch+json"])
        #expect(patched.status == 200)
        #expect(patched.object["title"] as? String == "u")
        #expect((patched.object["meta"] as? [String: Any])?.keys.sorted() == ["b", "c"])
        #expect(patched.object["_createdAt"] as? String == createdAt)
        let replaced = try HTTP.json("PUT", url, ["only": true])
        #expect(replaced.status == 200)
        #expect(replaced.object["title"] == nil)
        #expect(replaced.object["_createdAt"] as? String == createdAt)
        let deleted = try HTTP.send("DELETE", url)
        #expect(deleted.status == 200)
        let gone = try HTTP.send("GET", url)
        #expect(gone.status == 404)
    }
}
