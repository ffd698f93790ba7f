import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import RoostKit

/// A transport that answers from a script, recording what was asked.
final class ScriptedTransport: HTTPTransport, @unchecked Sendable {
    let requests = Locked<[URLRequest]>([])
    let answer: @Sendable (URLRequest) -> (Int, String)

    init(_ answer: @escaping @Sendable (URLRequest) -> (Int, String)) { self.answer = answer }

    func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        requests.update { $0.append(request) }
        let (status, body) = answer(request)
        let response = HTTPURLResponse(url: request.url!, statusCode: status, httpVersion: "HTTP/1.1",
                                       headerFields: ["Content-Type": "application/json"])!
        return (Data(body.utf8), response)
    }

    func stream(_ request: URLRequest) async throws -> (HTTPURLResponse, AsyncThrowingStream<Data, Error>) {
        throw URLError(.unsupportedURL)
    }
}

@Suite("Delta sync against a scripted server") struct DeltaSyncTests {
    static func since(_ r: URLRequest) -> String? {
        URLComponents(url: r.url!, resolvingAgainstBaseURL: false)?.queryItems?.first { $0.name == "since" }?.value
    }

    @Test("pages apply in order; CursorExpired drops the mirror and resyncs from scratch")
    func cursorExpired() async throws {
        let round = Locked(0)
        let transport = ScriptedTransport { request in
            let since = DeltaSyncTests.since(request)
            switch (round.value, since) {
            case (0, nil):
                return (200, #"{"changed":[{"_id":"a","_updatedAt":"t1"}],"deleted":[],"cursor":"p1","more":true}"#)
            case (0, "p1"):
                return (200, #"{"changed":[{"_id":"b","_updatedAt":"t1"}],"deleted":[],"cursor":"c1","more":false}"#)
            case (1, "c1"):
                return (410, #"{"error":"CursorExpired","description":"too old"}"#)
            case (1, nil):
                return (200, #"{"changed":[{"_id":"b","_updatedAt":"t2"}],"deleted":[],"cursor":"c2","more":false}"#)
            case (2, "c2"):
                return (200, #"{"changed":[],"deleted":[{"_id":"b"}],"cursor":"c3","more":false}"#)
            default:
                return (500, #"{"error":"InternalError","description":"unexpected \#(since ?? "nil")"}"#)
            }
        }
        let client = RoostClient(baseURL: URL(string: "http://scripted")!, transport: transport)
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("delta-\(UUID().uuidString).sqlite")
        defer { try? FileManager.default.removeItem(at: url) }
        let store = try OfflineStore(client: client, url: url, mirrors: [Mirror("notes")])

        var report = try await store.sync()
        #expect(report.changed == 2)
        #expect(try await store.find("notes", Query()).compactMap { $0["_id"]?.stringValue } == ["a", "b"])

        round.set(1)
        report = try await store.sync()
        #expect(report.resyncs == 1)
        #expect(try await store.find("notes", Query()) == [["_id": "b", "_updatedAt": "t2"]])

        round.set(2)
        report = try await store.sync()
        #expect(report.deleted == 1)
        #expect(try await store.find("notes", Query()).isEmpty)
        #expect(transport.requests.value.map { Self.since($0) ?? "-" } == ["-", "p1", "c1", "-", "c2"])
        #expect(transport.requests.value.allSatisfy { $0.url!.path == "/notes/_deltaset" })
    }
}
