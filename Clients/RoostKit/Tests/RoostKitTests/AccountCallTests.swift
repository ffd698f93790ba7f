import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import RoostKit

/// A transport that answers every request with one canned status and body,
/// and keeps the requests it was sent.
final class CannedTransport: HTTPTransport, @unchecked Sendable {
    let status: Int
    let body: String
    private let lock = NSLock()
    private var seen: [URLRequest] = []
    var requests: [URLRequest] { lock.critical { seen } }

    init(_ status: Int, _ body: String) { self.status = status; self.body = body }

    func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        lock.critical { seen.append(request) }
        return (Data(body.utf8), HTTPURLResponse(url: request.url!, statusCode: status, httpVersion: "HTTP/1.1",
                                                 headerFields: ["Content-Type": "application/json"])!)
    }

    func stream(_ request: URLRequest) async throws -> (HTTPURLResponse, AsyncThrowingStream<Data, Error>) {
        throw URLError(.unsupportedURL)
    }

    func sentJSON(_ index: Int = 0) throws -> JSONValue { try JSONValue.parse(requests[index].httpBody ?? Data()) }
}

@Suite("Account calls") struct AccountCallTests {
    static let session = #"{"token":"t1","expiresAt":"2030-01-01T00:00:00Z","user":{"_id":"u1","username":"ada"}}"#
    static let base = URL(string: "http://roost.test")!

    @Test("SHA-256 matches FIPS 180-4's vectors; a nonce is 64 hex digits and its hash")
    func sha256() {
        let cases: [(String, String)] = [
            ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
            ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
            ("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
            (String(repeating: "a", count: 1000), "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3"),
        ]
        for (input, hex) in cases { #expect(SHA256Digest.hex(of: Data(input.utf8)) == hex, "\(input.prefix(10))") }
        let nonce = SignInNonce()
        #expect(nonce.raw.count == 64 && nonce.raw.allSatisfy(\.isHexDigit))
        #expect(nonce.raw != SignInNonce().raw)
        #expect(SignInNonce(raw: "abc").sha256 == cases[1].1)
    }

    @Test("every sign-in call turns a 202 ticket into twoFactorRequired and keeps no session")
    func twoFactorTicket() async throws {
        let calls: [(String, @Sendable (RoostClient) async throws -> Void)] = [
            ("/login", { try await $0.logIn(username: "ada", password: "p") }),
            ("/login", { try await $0.logIn(email: "a@b.c", password: "p") }),
            ("/auth/idtoken", { try await $0.signIn(provider: "apple", idToken: "x.y.z", rawNonce: "n") }),
            ("/auth/password-reset", { try await $0.resetPassword(email: "a@b.c", code: "123456", newPassword: "new-password") }),
            ("/auth/password-reset", { try await $0.resetPassword(token: "tok", newPassword: "new-password") }),
        ]
        for (path, call) in calls {
            let transport = CannedTransport(202, #"{"twoFactorRequired":true,"ticket":"T-1"}"#)
            let client = RoostClient(baseURL: Self.base, transport: transport)
            await #expect(throws: RoostError.twoFactorRequired(TwoFactorChallenge(ticket: "T-1")), "\(path)") { try await call(client) }
            #expect(client.session == nil)
            #expect(transport.requests.first?.url?.path == path)
        }
    }

    @Test("request bodies use the server's field names")
    func bodies() async throws {
        let cases: [(String, String, @Sendable (RoostClient) async throws -> Void, JSONValue)] = [
            ("POST", "/auth/idtoken", { try await $0.signIn(provider: "apple", idToken: "h.p.s", rawNonce: "raw") },
             ["provider": "apple", "id_token": "h.p.s", "nonce": "raw"]),
            ("POST", "/auth/2fa/verify", { try await $0.verifyTwoFactor(ticket: "T", code: "123456") }, ["ticket": "T", "code": "123456"]),
            ("POST", "/login", { try await $0.logIn(email: "A@B.c", password: "pw") }, ["email": "A@B.c", "password": "pw"]),
            ("POST", "/auth/password-reset", { try await $0.resetPassword(email: "a@b.c", code: "000111", newPassword: "long-enough") },
             ["email": "a@b.c", "code": "000111", "password": "long-enough"]),
            ("POST", "/auth/anonymous", { try await $0.signInAsGuest() }, .null),
        ]
        for (method, path, call, body) in cases {
            let transport = CannedTransport(200, Self.session)
            let client = RoostClient(baseURL: Self.base, transport: transport)
            try await call(client)
            #expect(transport.requests.first?.httpMethod == method)
            #expect(transport.requests.first?.url?.path == path)
            if body != .null { #expect(try transport.sentJSON() == body, "\(path)") }
            #expect(client.session?.token == "t1", "\(path) starts the session")
        }
    }

    @Test("an email sign-up answers a session (201) or verificationRequired (202)")
    func emailSignUp() async throws {
        let pending = RoostClient(baseURL: Self.base, transport: CannedTransport(202, #"{"verificationRequired":true}"#))
        #expect(try await pending.signUp(email: "a@b.c", password: "pw-pw-pw-pw") == .verificationRequired)
        #expect(pending.session == nil)
        let transport = CannedTransport(201, Self.session)
        let open = RoostClient(baseURL: Self.base, transport: transport)
        guard case .signedIn(let s) = try await open.signUp(email: "a@b.c", password: "pw-pw-pw-pw", username: "ada",
                                                           profile: ["firstName": JSONValue.string("Ada")]) else {
            Issue.record("expected a session"); return
        }
        #expect(s.user.id == "u1" && open.userID == "u1")
        #expect(try transport.sentJSON() == ["email": "a@b.c", "password": "pw-pw-pw-pw", "username": "ada", "firstName": "Ada"])
    }

    @Test("only a refused session token ends the session, not a refused ID token or password")
    func unauthorizedKinds() async throws {
        for (code, ends) in [("InvalidToken", true), ("Unauthorized", true), ("InvalidIDToken", false), ("InvalidCredentials", false)] {
            let store = MemoryTokenStore()
            let signedIn = RoostClient(baseURL: Self.base, transport: CannedTransport(200, Self.session))
            let session = try await signedIn.logIn(username: "ada", password: "p")
            try store.save(session)
            let client = RoostClient(baseURL: Self.base, tokenStore: store,
                                     transport: CannedTransport(401, #"{"error":"\#(code)","description":"no"}"#))
            await #expect(throws: RoostError.self) { try await client.link(provider: "apple", idToken: "a.b.c", rawNonce: "n") }
            #expect((client.session == nil) == ends, "\(code)")
        }
    }

    @Test("new server codes are known by name; a guest record decodes with no username")
    func codesAndGuests() throws {
        for name in ["InvalidCode", "InvalidIDToken", "EmailNotVerified", "TwoFactorRequired", "EmailTaken", "ImmutableField",
                     "Referenced", "RateLimited", "SchemaViolation", "AccessRuleDenied", "TooManyStreams", "ScriptError"] {
            let code = ServerError.Code(rawValue: name)
            #expect(code.rawValue == name)
            if case .unknown = code { Issue.record("\(name) is unknown") }
        }
        let guest = try JSONDecoder().decode(RoostUser.self, from: Data(#"{"_id":"g1","anonymous":true}"#.utf8))
        #expect(guest.isGuest && guest.username.isEmpty)
        #expect(try !JSONDecoder().decode(RoostUser.self, from: Data(#"{"_id":"u1","username":"ada"}"#.utf8)).isGuest)
    }
}
