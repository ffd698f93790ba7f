@testable import Files
import HTTP
import Hooks
import Jobs
import Logging
import Store
import StoreSQLite
import Testing
@testable import Roost

/// Every error a client can meet becomes HTTP in one place: its status, code, body and headers.
@Suite struct ErrorResponseTests {
    static let request = Request(method: .get, path: "/x", segments: ["x"], query: [:], headers: Headers(), body: [], requestID: "t")
    static let logger = Logger(label: "errors")

    static func render(_ error: any Error) -> Response { ErrorResponses.response(for: error, request, logger) }

    @Test(arguments: [
        (StoreError.notFound("gone"), 404, #"{"error":"NotFound","description":"gone"}"#),
        (StoreError.forbidden("no"), 403, #"{"error":"Forbidden","description":"no"}"#),
        (StoreError.expired("old"), 410, #"{"error":"CursorExpired","description":"old"}"#),
        (HookRefusal(status: 422, appCode: "Nope", "refused"), 422, #"{"error":"Nope","description":"refused"}"#),
        (UploadError.empty(), 400, #"{"error":"EmptyBody","description":"The request body is empty; send the file's bytes."}"#),
        (AccessScope.Denial.forbidden("private"), 403, #"{"error":"Forbidden","description":"private"}"#),
        (ReferencedError(collection: "c", id: "a", count: 2), 409,
         #"{"error":"Referenced","description":"\"a\" in c is referenced by 2 entities whose reference restricts deletes; remove those references first.","count":2}"#),
        (ReferencedError(code: .cascadeTooLarge, collection: "c", id: "a", count: 5, limit: 3), 409,
         #"{"error":"CascadeTooLarge","description":"Deleting \"a\" from c would delete or change 5 entities through references than references_max_cascade (3) allows; nothing was changed.","limit":3,"count":5}"#),
        (BatchHandler.Failure(index: 2, inner: HTTPError.conflict("taken")), 409,
         #"{"error":"Conflict","description":"Operation 2 failed, so nothing in the batch was applied: taken","operation":2}"#),
    ] as [(any Error & Sendable, Int, String)])
    func rendered(error: any Error & Sendable, status: Int, body: String) {
        let response = Self.render(error)
        #expect(response.status == status)
        #expect(String(decoding: response.body, as: UTF8.self) == body)
        #expect(response.headers["Content-Type"] == "application/json; charset=utf-8")
    }

    @Test func unauthorizedSaysHowToAuthenticateOnce() {
        for error: any Error in [StoreError.unauthorized("sign in"), HTTPError(.unauthorized, "x"),
                                 BatchHandler.Failure(index: 0, inner: StoreError.unauthorized("sign in").httpError)] {
            let response = Self.render(error)
            #expect(response.status == 401)
            #expect(response.headers.filter { $0.name == "WWW-Authenticate" }.count == 1, "\(error)")
        }
    }

    @Test func ourOwnFailuresAre500() {
        let response = Self.render(DurableFile.Failure(description: "disk full"))
        #expect(response.status == 500 && String(decoding: response.body, as: UTF8.self).contains("InternalError"))
    }

    /// One overload policy: every full queue answers 503 Overloaded, with the
    /// Retry-After of its lane.
    @Test(arguments: [(Overload.reads, "1"), (.writes, "1"), (.uploads, "1"), (.thumbnails, "1"), (.hashes, "2"), (.slowReads, "2")])
    func overloadCarriesRetryAfter(overload: Overload, retryAfter: String) {
        let response = overload.error.response
        #expect(response.status == 503 && response.headers["Retry-After"] == retryAfter)
        #expect(String(decoding: response.body, as: UTF8.self).contains(#""error":"Overloaded""#))
    }
}

/// Writer jobs carry their own result type to their completion.
@Suite struct WriteJobTests {
    @Test func completionGetsTheOperationsValueOrError() throws {
        let got = LockedBox<[String]>([])
        let counted = StorePools.WriteJob(operation: { _ in 42 }, completion: { result in
            got.set(got.get() + ["\(try! result.get())"])
        })
        let failing = StorePools.WriteJob(operation: { _ -> Void in throw StoreError.conflict("taken") }, completion: { result in
            if case .failure(let e) = result { got.set(got.get() + ["\(e)"]) }
        })
        let writer = try DocumentWriter(path: ":memory:", synchronous: "OFF", ids: DocumentID(), logger: Logger(label: "t"))
        try (try counted.operation(writer))()
        #expect(throws: StoreError.self) { _ = try failing.operation(writer) }
        failing.failed(StoreError.conflict("taken"))
        #expect(got.get().first == "42" && got.get().count == 2)
    }
}
