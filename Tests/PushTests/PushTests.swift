import CCrypto
import Foundation
import Logging
import JSON
import Store
import StoreSQLite
import Testing
@testable import Push

/// Keys made for these tests only (openssl genpkey), never used elsewhere.
enum TestKeys {
    static let p256 = """
-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgVA8meqfAGU3Hfg8a
cne58gu6LSfIcptCtL2dbEp4kiihRANCAASepW/D8fPo6hQ8CjIxV6DSVH3Ej6Yh
wkaLXYC/WTxs5dJ4YLxVfUFL40IFGg/DjYYNF52zzwl+t/PXOjAkrQUf
-----END PRIVATE KEY-----
"""
    static let rsa2048 = """
-----BEGIN PRIVATE KEY-----
MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC+3vtuillu4AXk
vIVhY/k8fRC6HD4gV5SaZmjZaRMVEPeIe3/6xJivfeiDBdo/S26Vxe1DMyekuYMJ
VsXwwrM6No3rXni0ZF1GEDvoX6IaprYOiixVtbEzpFuQNwCEQJiRg668e0BTXeea
k9tVh8bIsm9HzPnX0W7O2S/7vf4xoJjwO4rJwKysq4I1WPwyu+T6e0Q+QVIvT0cH
8svIMO0LWpvQaXWOoYX9c6yTTmnxC6jTDdJ7IYzcwN/BDi5OoaZW59wEAhpsRbgE
23pYRw06cp1NBJTK2l1D/Er383vl0Q/02V+TOOdMN85A6At5DQY7PJJe6mVe6PDh
1AAabVvxAgMBAAECggEAAnjXQzieknzWCAmoMBQC2hApb5b2ooWuhpE8OybyW3KI
GYVLnxMIAmDZn7B2Fx2vhwLPMSXoKz4zAWOqxgodgbaLwBWYhQdA59ZavPEXzkDP
E5E2+bK0Asir3hT/nZbhFaRhwVjsIxBF/pa65N4QmpA+DaKM21PVRlpM1esMEAw1
eVUBm/zZ/qegqidh5CyaLvP2cI69aAF5yckMsNfAUf3FXXJjfn2auV88gz1RSw3W
IKcdaqwOhNlMDGy/lYJKJZAi6WCkHzqNf4+NHry3AbGKGq9ly5Eqe5Srj0jurnlu
WT8nrG2Oyzh+uDu8MNnqJ1CDynYvQuPZjLfvQg6TKQKBgQDwLircrO+BlYr1eMYr
+DYmYn13dxMILhr/5QHl8QcqzTGXltCBdxqLVuw6ZuoYXQ8wLPnvR07ztyc25N+D
1g+mDdjohRBIUX6huOsCoFkr50OUUvzZGq6hvmVYaOnB91sUw7apPm5PkzYZN3CF
GbnvjdQsUfbtvKsuI/zY9OzUyQKBgQDLcWEQItX5Yus4Vytv6VehGFsUHTjuez02
VMrgq5YJP3o0RyS6RTdD8pu9FE1WJ0gBnlOBWHNYsdbdvMnjr5A7hRSWuRNf3FFe
EdCrTneqVbIeT3JefYAUOEt9w1s4WEPkiwaC1Q38HGYlqv15Gc95YkuGnlUIPla2
Kqlt2a+p6QKBgHrvlp7XocwZSEQ3KnBNHyJsnT3t4/724nkCtgMFaR6+YtjtqBHs
bdjOiCGolcAcue51xwRz4nSa1eaiJcosYlwjkFgL6/aoSAHtTdVNT/dJ62xbQfK6
VpKRivxCzwuqWaN6Pd/JBduTRUiI+P4X2fVFCkoZNiQfwxrd7sj6LNMJAoGABPa0
No+TBu2p7Yr67VUVJUIR3tDDtdXd7XhuJsMo+vrIgYQG2mCb85V0xU08gdCdiiSR
xwMgdVaJdomHp31+GGWr1e2YEmuutIvcuoFEnCxRFzo7ASEwwc2J0fy1Og+1QFtA
AmsuVyteNqcQXicKD90dGKC+VGAo/3LVBXAdQBkCgYEA19nbCFH5DrHIFUHJZg45
cf/bVKdV1QaordIcP5X56lszKKkFPdRE+4DZrANLRdmTK4B+xbHrotztHUJUXBuD
cl0067rXGwdbE2G0lN2sui2sNzxVBRtAsqVapYlCdcCK5ir6s51UXy3vVKPhZHpG
8XKfNy+w3DUcQWg9sAqrP7Y=
-----END PRIVATE KEY-----
"""
    static let p384 = """
-----BEGIN PRIVATE KEY-----
MIG2AgEAMBAGByqGSM49AgEGBSuBBAAiBIGeMIGbAgEBBDDpGNZfvdFSpprVpasY
gDNxJDJeogox9EA346ygWZf+pRvkKW9RfSA4I0eH/RL9LhmhZANiAARr6uMFGAgO
YH1exGaZwipTOnOLPQHzDUolJd1HQI36xVc0sceNIgGChOUvh2k7mkKRLTDWo7MS
CP+33dK5JOwxqlRygp51bd7myUu4El3Vch3nr7fVRw4K72b4VH1Icm8=
-----END PRIVATE KEY-----
"""
}

@Suite struct JWTSignerTests {
    /// Verifies `signature` over `message` with the public half of `pem` (ES256 signatures are turned back into DER first).
    func verifies(_ pem: String, _ message: [UInt8], _ signature: [UInt8], es256: Bool) -> Bool {
        let bytes = Array(pem.utf8)
        guard let key = bytes.withUnsafeBytes({ raw -> OpaquePointer? in
            let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count))
            defer { BIO_free(bio) }
            return PEM_read_bio_PrivateKey(bio, nil, nil, nil)
        }) else { return false }
        defer { EVP_PKEY_free(key) }
        var der = signature
        if es256 {
            guard signature.count == 64, let sig = ECDSA_SIG_new() else { return false }
            defer { ECDSA_SIG_free(sig) }
            let r = BN_bin2bn(signature, 32, nil), s = BN_bin2bn(Array(signature[32...]), 32, nil)
            ECDSA_SIG_set0(sig, r, s)
            var out: UnsafeMutablePointer<UInt8>? = nil
            let n = i2d_ECDSA_SIG(sig, &out)
            guard n > 0, let out else { return false }
            der = Array(UnsafeBufferPointer(start: out, count: Int(n)))
            CRYPTO_free(out, nil, 0)
        }
        let ctx = EVP_MD_CTX_new()
        defer { EVP_MD_CTX_free(ctx) }
        guard EVP_DigestVerifyInit(ctx, nil, EVP_sha256(), nil, key) == 1 else { return false }
        return EVP_DigestVerify(ctx, der, der.count, message, message.count) == 1
    }

    @Test(arguments: [(TestKeys.p256, JWTSigner.Algorithm.es256, 64), (TestKeys.rsa2048, .rs256, 256)])
    func signsCompactTokensThatVerify(pem: String, algorithm: JWTSigner.Algorithm, signatureBytes: Int) throws {
        let signer = try JWTSigner(pem: pem, algorithm: algorithm)
        var header = JSONObject()
        header["kid"] = .string("KEY1")
        var claims = JSONObject()
        claims["iss"] = .string("TEAM")
        claims["iat"] = .int(1_700_000_000)
        let token = try signer.token(header: header, claims: claims)
        let parts = token.split(separator: ".").map(String.init)
        #expect(parts.count == 3)
        let decodedHeader = try JSONParser.parse(Base64URL.decode(parts[0])!)
        #expect(decodedHeader.objectValue?["alg"] == .string(algorithm.rawValue))
        #expect(decodedHeader.objectValue?["kid"] == .string("KEY1"))
        #expect(try JSONParser.parse(Base64URL.decode(parts[1])!) == .object(claims))
        let signature = Base64URL.decode(parts[2])!
        #expect(signature.count == signatureBytes)   // ES256: raw r||s, not DER
        #expect(verifies(pem, Array((parts[0] + "." + parts[1]).utf8), signature, es256: algorithm == .es256))
        #expect(!verifies(pem, Array((parts[0] + "." + parts[1] + "x").utf8), signature, es256: algorithm == .es256))
    }

    @Test(arguments: [
        (TestKeys.rsa2048, JWTSigner.Algorithm.es256), (TestKeys.p384, .es256), (TestKeys.p256, .rs256), ("not a key", .es256),
        (encryptedP256, .es256),
    ])
    func refusesKeysThatDoNotFit(pem: String, algorithm: JWTSigner.Algorithm) {
        #expect(throws: JWTSigner.KeyError.self) { try JWTSigner(pem: pem, algorithm: algorithm) }
    }
}

/// An encrypted .p8: refused at once (no password prompt on a terminal).
let encryptedP256 = """
-----BEGIN ENCRYPTED PRIVATE KEY-----
MIHsMFcGCSqGSIb3DQEFDTBKMCkGCSqGSIb3DQEFDDAcBAiZUDoQaSfDAgICCAAw
DAYIKoZIhvcNAgkFADAdBglghkgBZQMEASoEEFDgEjqltCQcgWWrwfnjOAMEgZBR
x6gHIIXg3mOSeFheVCmDgl4GmB0cTzvAD0/0nCeShrhchfW9ii/VsRqU1T11Oqlf
gB8zu1gwSFJSTS4lfgIAGSjdomRvNoNprLgBQZuzHCL60CuvWZW03ByDKkPdlj1g
aOGvpE0mOSoy1sKLgO7hCEX1+osCuVUjju26LZj6pK+kM4yfi1fg1z4D0UfwSws=
-----END ENCRYPTED PRIVATE KEY-----
"""

@Suite struct ProviderVerdictTests {
    static func response(_ status: Int?, _ body: String = "", retryAfter: Int? = nil) -> HTTP2Response {
        HTTP2Response(status: status, retryAfter: retryAfter, body: Array(body.utf8), httpVersion: 2, error: status == nil ? "refused" : nil)
    }

    @Test(arguments: [
        (response(200), ProviderVerdict.delivered),
        (response(410, #"{"reason":"Unregistered","timestamp":1700000000000}"#), .removeDevice(reason: "APNs 410 Unregistered", ifSeenBefore: 1_700_000_000_000)),
        (response(400, #"{"reason":"BadDeviceToken"}"#), .tryOtherEnvironment(reason: "APNs 400 BadDeviceToken")),
        (response(400, #"{"reason":"DeviceTokenNotForTopic"}"#), .dead(reason: "APNs 400 DeviceTokenNotForTopic")),
        (response(403, #"{"reason":"ExpiredProviderToken"}"#), .refreshCredential(reason: "APNs 403 ExpiredProviderToken")),
        (response(429, #"{"reason":"TooManyRequests"}"#, retryAfter: 7), .retry(retryAfter: 7, reason: "APNs 429 TooManyRequests")),
        (response(503, #"{"reason":"ServiceUnavailable"}"#), .retry(retryAfter: nil, reason: "APNs 503 ServiceUnavailable")),
        (response(413, #"{"reason":"PayloadTooLarge"}"#), .dead(reason: "APNs 413 PayloadTooLarge")),
        (response(403, #"{"reason":"InvalidProviderToken"}"#), .dead(reason: "APNs 403 InvalidProviderToken")),
        (response(nil), .retry(retryAfter: nil, reason: "refused")),
    ])
    func apns(_ answer: HTTP2Response, _ expected: ProviderVerdict) {
        #expect(APNsProvider.verdict(answer) == expected)
    }

    static let unregistered = #"{"error":{"code":404,"status":"NOT_FOUND","details":[{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"UNREGISTERED"}]}}"#
    static let tokenInvalid = #"{"error":{"code":400,"status":"INVALID_ARGUMENT","message":"x","details":[{"fieldViolations":[{"field":"message.token"}]}]}}"#
    static let payloadInvalid = #"{"error":{"code":400,"status":"INVALID_ARGUMENT","message":"Invalid JSON payload","details":[{"fieldViolations":[{"field":"message.android.ttl"}]}]}}"#

    @Test(arguments: [
        (response(200), ProviderVerdict.delivered),
        (response(404, unregistered), .removeDevice(reason: "FCM 404 UNREGISTERED", ifSeenBefore: nil)),
        (response(404, "{}"), .dead(reason: "FCM 404 HTTP 404")),
        (response(404, "<html>Not Found</html>"), .dead(reason: "FCM 404 HTTP 404")),
        (response(404, #"{"error":{"code":404,"status":"NOT_FOUND","message":"Requested entity was not found."}}"#),
         .removeDevice(reason: "FCM 404 NOT_FOUND", ifSeenBefore: nil)),
        (response(400, tokenInvalid), .removeDevice(reason: "FCM 400 INVALID_ARGUMENT (token)", ifSeenBefore: nil)),
        (response(400, payloadInvalid), .dead(reason: "FCM 400 INVALID_ARGUMENT")),
        (response(401, #"{"error":{"status":"UNAUTHENTICATED"}}"#), .refreshCredential(reason: "FCM 401 UNAUTHENTICATED")),
        (response(429, #"{"error":{"status":"RESOURCE_EXHAUSTED"}}"#, retryAfter: 30), .retry(retryAfter: 30, reason: "FCM 429 RESOURCE_EXHAUSTED")),
        (response(500), .retry(retryAfter: nil, reason: "FCM 500 HTTP 500")),
    ])
    func fcm(_ answer: HTTP2Response, _ expected: ProviderVerdict) {
        #expect(FCMProvider.verdict(answer) == expected)
    }
}

@Suite struct PushNotificationTests {
    @Test func apnsPayloadStaysWithin4KB() throws {
        for text in ["short", String(repeating: "é\\\"", count: 3000), String(repeating: "👍", count: 2000)] {
            let n = PushNotification(title: "T", body: text, threadID: "a:b", mutableContent: true)
            let payload = try #require(n.apnsPayload())
            #expect(payload.count <= PushNotification.apnsPayloadLimit)
            let body = try JSONParser.parse(payload).objectValue?["aps"]?.objectValue?["alert"]?.objectValue?["body"]?.stringValue
            let kept = body.map { $0 == text ? $0 : String($0.unicodeScalars.dropLast()) } ?? ""
            #expect(body == text || (body!.hasSuffix("…") && text.unicodeScalars.starts(with: kept.unicodeScalars)), "\(text.prefix(8)): \(body?.suffix(8) ?? "")")
        }
    }

    @Test func storedFormRoundTrips() throws {
        var data = JSONObject()
        var sync = JSONObject()
        sync["sync"] = .array([.string("notes")])
        data["roost"] = .object(sync)
        let n = PushNotification(title: "a", body: "b", threadID: "t", badge: 3, mutableContent: true, data: data, background: true, timeToLive: 60)
        #expect(PushNotification(json: try JSONParser.parse(n.json.jsonText)) == n)
        #expect(APNsProvider.prefix(String(repeating: "é", count: 40), bytes: 64).utf8.count == 64)
        #expect(APNsProvider.pathSegment("ab01ff") == "ab01ff")
        #expect(APNsProvider.pathSegment("a?b c/é") == "a%3Fb%20c%2F%C3%A9")
    }
}

/// The dispatcher's own guards, against a real SQLite outbox and no provider
/// (its pushes finish at once as dead, no network needed).
@Suite struct PushDispatcherGuardTests {
    final class Counter: @unchecked Sendable {
        let lock = NSLock()
        var n = 0
        func bump() { lock.lock(); n += 1; lock.unlock() }
        var value: Int { lock.lock(); defer { lock.unlock() }; return n }
    }

    static func outbox(pushes: Int) throws -> (SQLiteEngine, DocumentWriter) {
        let path = NSTemporaryDirectory() + "push-guard-\(UInt64.random(in: 0...UInt64.max)).db"
        let writer = try DocumentWriter(path: path, ids: DocumentID(), logger: Logger(label: "test"))
        try writer.migrate()
        try writer.registerDevice(token: String(repeating: "ab", count: 32), userID: "u1", platform: "ios", environment: nil, sync: false)
        for _ in 0..<pushes {
            try writer.enqueuePush(userID: "u1", kind: "alert", payload: PushNotification(body: "hi").json.jsonText, collapseID: nil,
                                   audience: PushAudience(platforms: ["ios"]))
        }
        return (SQLiteEngine(path: path), writer)
    }

    @Test("a record that fails holds the batch back, with a growing back-off, instead of resending at once")
    func failedRecordBacksOff() throws {
        let (engine, _) = try Self.outbox(pushes: 3)
        let calls = Counter()
        let dispatcher = PushDispatcher(engine: engine, settings: .init(), apns: nil, fcm: nil,
                                        record: { _, done in calls.bump(); done(false) },
                                        onOutcome: { _, _ in }, onRemoval: { _ in }, logger: Logger(label: "test"))
        try dispatcher.start()
        Thread.sleep(forTimeInterval: 2)
        dispatcher.shutdown()
        // 0 s, 0.5 s, 1.5 s (and the start's sweep): a resend loop would make hundreds.
        #expect(calls.value >= 2 && calls.value <= 6, "\(calls.value) records in 2 s")
    }

    @Test("a record that commits is not held")
    func committedRecordFinishes() throws {
        let (engine, opened) = try Self.outbox(pushes: 3)
        nonisolated(unsafe) let writer = opened
        let lock = NSLock()
        let dispatcher = PushDispatcher(engine: engine, settings: .init(), apns: nil, fcm: nil,
                                        record: { write, done in
                                            lock.lock(); defer { lock.unlock() }
                                            do { try writer.transaction { try write(writer) }; done(true) } catch { done(false) }
                                        },
                                        onOutcome: { _, _ in }, onRemoval: { _ in }, logger: Logger(label: "test"))
        try dispatcher.start()
        let reader = try engine.openReader()
        let deadline = Date().addingTimeInterval(5)
        while try reader.pushDeliveries(status: "dead", limit: 10).count < 3 && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        dispatcher.shutdown()
        #expect(try reader.pushDeliveries(status: "dead", limit: 10).count == 3)
        #expect(try reader.pushDeliveries(status: "pending", limit: 10).isEmpty)
    }

    @Test(arguments: [(0, 100, false), (9, 9, false), (5, 10, false), (6, 10, true), (100, 100, true), (1, 1, false)])
    func removalBreaker(removals: Int, batch: Int, trips: Bool) {
        #expect(PushDispatcher.removalsLookWrong(removals: removals, of: batch) == trips)
    }

    @Test func breakerKeepsTheDevices() throws {
        let dispatcher = PushDispatcher(engine: SQLiteEngine(path: "/nonexistent"), settings: .init(), apns: nil, fcm: nil,
                                        record: { _, done in done(true) }, onOutcome: { _, _ in }, onRemoval: { _ in }, logger: Logger(label: "test"))
        let records = (0..<12).map { i in
            PushAttemptRecord(rid: Int64(i), token: "t\(i)", attempt: 1, status: 410, error: "APNs 410 Unregistered", outcome: .dead,
                              removal: i < 8 ? .init(reason: "Unregistered", ifSeenBefore: nil) : nil)
        }
        #expect(dispatcher.breaker(records).allSatisfy { $0.removal == nil })
        // and it stays tripped for the next, small batch
        #expect(dispatcher.breaker(Array(records.prefix(1))).allSatisfy { $0.removal == nil })
        #expect(PushDispatcher.saveBackoffMilliseconds(failures: 1) == 500 && PushDispatcher.saveBackoffMilliseconds(failures: 30) == 60_000)
    }
}

@Suite struct PushOutboxPruneTests {
    @Test("finished silent pushes go long before alerts, a limit at a time; pending ones stay")
    func prunesBackgroundFirstInShortJobs() throws {
        let (_, writer) = try PushDispatcherGuardTests.outbox(pushes: 2)
        for _ in 0..<3 {
            try writer.enqueuePush(userID: "u1", kind: "background", payload: PushNotification(background: true).json.jsonText, collapseID: nil,
                                   audience: PushAudience(platforms: ["ios"]))
        }
        // everything but the last one finished
        let token = String(repeating: "ab", count: 32)
        _ = try writer.recordPushAttempts((1...4).map { PushAttemptRecord(rid: Int64($0), token: token, attempt: 1, status: 200, error: nil, outcome: .delivered) })
        let past = "2000-01-01T00:00:00.000Z", future = "2999-01-01T00:00:00.000Z"
        #expect(try writer.pruneFinishedPushes(alertsBefore: past, backgroundBefore: future, limit: 1) == 1)
        #expect(try writer.pruneFinishedPushes(alertsBefore: past, backgroundBefore: future, limit: 5) == 1)
        #expect(try writer.pruneFinishedPushes(alertsBefore: past, backgroundBefore: future, limit: 5) == 0)
        #expect(try writer.pruneFinishedPushes(alertsBefore: future, backgroundBefore: future, limit: 5) == 2)
        #expect(try writer.pruneFinishedPushes(alertsBefore: future, backgroundBefore: future, limit: 5) == 0)
    }
}

@Suite struct PushOutboxCoalesceTests {
    @Test("a silent push is not added when the device got one within the interval; a new one supersedes older pending ones")
    func coalescesSilentPushesPerDevice() throws {
        let (engine, writer) = try PushDispatcherGuardTests.outbox(pushes: 1)
        let token = String(repeating: "ab", count: 32)
        func silent(since: String?) throws -> Int {
            try writer.enqueuePush(userID: "u1", kind: "background", payload: PushNotification(background: true).json.jsonText, collapseID: "roost-sync",
                                   audience: PushAudience(platforms: ["ios"], syncOnly: false, token: token, coalesceSince: since))
        }
        let minuteAgo = Timestamp.format(Date().addingTimeInterval(-60)), later = "2999-01-01T00:00:00.000Z"
        #expect(try silent(since: minuteAgo) == 1)
        #expect(try silent(since: minuteAgo) == 0)   // another node, same interval
        #expect(try silent(since: later) == 1)       // the interval passed: a new one, the old one dropped
        let reader = try engine.openReader()
        let background = try reader.pushDeliveries(status: nil, limit: 10).filter { $0.kind == "background" }
        #expect(background.map(\.status) == ["pending", "dropped"])
        // alerts are never coalesced or superseded
        #expect(try writer.enqueuePush(userID: "u1", kind: "alert", payload: PushNotification(body: "x").json.jsonText, collapseID: nil,
                                       audience: PushAudience(platforms: ["ios"], coalesceSince: minuteAgo)) == 1)
        #expect(try reader.pushDeliveries(status: "pending", limit: 10).count == 3)
    }
}
