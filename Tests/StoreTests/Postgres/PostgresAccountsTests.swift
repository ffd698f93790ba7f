import Foundation
import JSON
import Logging
import Store
@testable import StorePostgres
import Testing

/// Accounts, sessions, the throttle's rows and push devices: the same
/// script on SQLite and on PostgreSQL gives the same transcript.
@Suite("PostgreSQL engine: accounts and sessions")
struct PostgresAccountsTests {
    static func hash(_ n: Int) -> String { String(format: "%016x", n) + String(repeating: "ab", count: 24) }

    static func text(_ c: CredentialRecord?) -> String { c.map { "\($0.userID)/\($0.username)/\($0.passwordHash)" } ?? "nil" }
    static func text(_ s: SessionRecord?) -> String { s.map { "\($0.userID) \($0.expiresAt) \($0.lastSeen)" } ?? "nil" }
    static func text(_ list: [SessionSummary]) -> String { list.map { "\($0.id) \($0.createdAt) \($0.lastSeen) \($0.expiresAt)" }.joined(separator: ", ") }

    static var credentialSteps: [AccountsStep] { [
        ("add Alice", { w, _ in try w.inBatch { try $0.addCredentials(userID: "u1", username: "Alice", passwordHash: "h1") }; return "ok" }),
        ("add alice (ASCII case folded)", { w, _ in try w.inBatch { try $0.addCredentials(userID: "u2", username: "alice", passwordHash: "h") }; return "ok" }),
        ("add ÄLICE (not folded)", { w, _ in try w.inBatch { try $0.addCredentials(userID: "u3", username: "ÄLICE", passwordHash: "h3") }; return "ok" }),
        ("add älice", { w, _ in try w.inBatch { try $0.addCredentials(userID: "u4", username: "älice", passwordHash: "h4") }; return "ok" }),
        ("add a taken user id", { w, _ in try w.inBatch { try $0.addCredentials(userID: "u1", username: "bob", passwordHash: "h") }; return "ok" }),
        ("find ALICE", { _, r in text(try r.credentials(username: "ALICE")) }),
        ("find Älice", { _, r in text(try r.credentials(username: "Älice")) }),
        ("find älice", { _, r in text(try r.credentials(username: "älice")) }),
        ("find nobody", { _, r in text(try r.credentials(username: "nobody")) }),
        ("find by id", { _, r in text(try r.credentials(userID: "u3")) }),
        ("set password", { w, r in try w.inBatch { try $0.setPassword(userID: "u1", passwordHash: "h1b") }; return text(try r.credentials(userID: "u1")) }),
        ("writer reads ALICE", { w, _ in text(try w.credentials(username: "aLiCe")) }),
        ("delete u4", { w, r in try w.inBatch { try $0.deleteCredentials(userID: "u4") }; return text(try r.credentials(username: "älice")) }),
        ("alice's name is free again after delete", { w, _ in
            try w.inBatch { try $0.deleteCredentials(userID: "u1") }
            try w.inBatch { try $0.addCredentials(userID: "u5", username: "ALICE", passwordHash: "h5") }
            return text(try w.credentials(username: "alice"))
        }),
    ] }

    static var sessionSteps: [AccountsStep] { [
        ("create", { w, _ in
            try w.inBatch { w in
                try w.createSession(userID: "u1", tokenHash: hash(0), now: 0, lifetime: 10)
                try w.createSession(userID: "u1", tokenHash: hash(1), now: 1000, lifetime: 100)
                try w.createSession(userID: "u1", tokenHash: hash(2), now: 1001, lifetime: 100)
                try w.createSession(userID: "u2", tokenHash: hash(3), now: 1002, lifetime: 100)
            }
            return "ok"
        }),
        ("expired one removed on the way", { w, r in text(try r.session(tokenHash: hash(0), now: 5)) + " " + text(try w.session(tokenHash: hash(0), now: 5)) }),
        ("live", { _, r in text(try r.session(tokenHash: hash(1), now: 1050)) }),
        ("at expiry", { _, r in text(try r.session(tokenHash: hash(1), now: 1100)) }),
        ("renew", { w, r in try w.inBatch { try $0.renewSession(tokenHash: hash(1), now: 1090, lifetime: 100) }; return text(try r.session(tokenHash: hash(1), now: 1150)) }),
        ("renew an expired one does nothing", { w, r in try w.inBatch { try $0.renewSession(tokenHash: hash(2), now: 1200, lifetime: 100) }; return text(try r.session(tokenHash: hash(2), now: 1150)) }),
        ("list", { _, r in text(try r.sessions(userID: "u1", now: 1095)) }),
        ("revoke a bad id", { w, _ in String(try w.inBatch { try $0.revokeSessions(userID: "u1", id: "xyz") }) }),
        ("revoke another user's", { w, _ in String(try w.inBatch { try $0.revokeSessions(userID: "u1", id: String(hash(3).prefix(16))) }) }),
        ("revoke one", { w, r in String(try w.inBatch { try $0.revokeSessions(userID: "u1", id: String(hash(2).prefix(16))) }) + " " + text(try r.sessions(userID: "u1", now: 1000)) }),
        ("delete one", { w, _ in "\(try w.inBatch { try $0.deleteSession(tokenHash: hash(1)) }) \(try w.inBatch { try $0.deleteSession(tokenHash: hash(1)) })" }),
        ("delete all but one", { w, r in
            try w.inBatch { w in
                for n in 4...6 { try w.createSession(userID: "u3", tokenHash: hash(n), now: 2000, lifetime: 100) }
                try w.deleteSessions(userID: "u3", keeping: hash(5))
            }
            return text(try r.sessions(userID: "u3", now: 2000))
        }),
        ("delete all", { w, r in try w.inBatch { try $0.deleteSessions(userID: "u3", keeping: nil) }; return text(try r.sessions(userID: "u3", now: 2000)) }),
        ("revoke all", { w, _ in String(try w.inBatch { try $0.revokeSessions(userID: "u2", id: nil) }) }),
        ("deleting credentials ends sessions", { w, r in
            try w.inBatch { try $0.createSession(userID: "u9", tokenHash: hash(9), now: 3000, lifetime: 100) }
            try w.inBatch { try $0.deleteCredentials(userID: "u9") }
            return text(try r.session(tokenHash: hash(9), now: 3000))
        }),
    ] }

    static func counter(_ c: (failures: Int64, windowStart: Int64, blockedUntil: Int64)?) -> String {
        c.map { "\($0.failures) \($0.windowStart) \($0.blockedUntil)" } ?? "nil"
    }

    static var throttleSteps: [AccountsStep] { [
        ("absent", { w, _ in counter(try w.inBatch { try $0.loginCounter("pair:a|1.2.3.4") }) }),
        ("save and read", { w, _ in
            try w.inBatch { try $0.saveLoginCounter("pair:a|1.2.3.4", failures: 3, windowStart: 100, blockedUntil: 0) }
            try w.inBatch { try $0.saveLoginCounter("pair:a|1.2.3.4", failures: 4, windowStart: 100, blockedUntil: 150) }
            return counter(try w.inBatch { try $0.loginCounter("pair:a|1.2.3.4") })
        }),
        ("prune spares the blocked and the recent", { w, _ in
            try w.inBatch { w in
                for n in 0..<30 { try w.saveLoginCounter("address:10.0.0.\(n)", failures: 1, windowStart: 50, blockedUntil: 0) }
                try w.saveLoginCounter("address:recent", failures: 1, windowStart: 500, blockedUntil: 0)
                try w.pruneLoginCounters(windowStartBefore: 120, now: 140, limit: 20)
            }
            let left = try (0..<30).filter { n in try w.inBatch { try $0.loginCounter("address:10.0.0.\(n)") } != nil }.count
            return "\(left) left; " + counter(try w.inBatch { try $0.loginCounter("pair:a|1.2.3.4") }) + "; " + counter(try w.inBatch { try $0.loginCounter("address:recent") })
        }),
        ("delete", { w, _ in try w.inBatch { try $0.deleteLoginCounter("pair:a|1.2.3.4") }; return counter(try w.inBatch { try $0.loginCounter("pair:a|1.2.3.4") }) }),
        ("known addresses", { w, _ in
            try w.inBatch { w in
                try w.rememberLoginAddress(userID: "u1", address: "1.2.3.4", now: 100, forgetBefore: 0)
                try w.rememberLoginAddress(userID: "u1", address: "1.2.3.4", now: 200, forgetBefore: 0)
                try w.rememberLoginAddress(userID: "u1", address: "5.6.7.8", now: 100, forgetBefore: 0)
            }
            return try [(1, "1.2.3.4", 150), (1, "5.6.7.8", 150), (2, "1.2.3.4", 0)].map { u, a, since in
                String(try w.inBatch { try $0.isKnownLoginAddress(userID: "u\(u)", address: a, since: Int64(since)) })
            }.joined(separator: " ")
        }),
        ("old addresses forgotten", { w, _ in
            try w.inBatch { try $0.rememberLoginAddress(userID: "u2", address: "9.9.9.9", now: 300, forgetBefore: 150) }
            return String(try w.inBatch { try $0.isKnownLoginAddress(userID: "u1", address: "5.6.7.8", since: 0) })
        }),
    ] }

    static func text(_ devices: [PushDevice]) -> String { devices.map { "\($0.token):\($0.userID):\($0.platform)" }.joined(separator: ", ") }

    static var deviceSteps: [AccountsStep] { [
        ("register", { w, _ in "\(try w.inBatch { try $0.registerDevice(token: "t1", userID: "u1", platform: "ios") })" }),
        ("again, unchanged", { w, _ in "\(try w.inBatch { try $0.registerDevice(token: "t1", userID: "u1", platform: "ios") })" }),
        ("new platform", { w, _ in "\(try w.inBatch { try $0.registerDevice(token: "t1", userID: "u1", platform: "android") })" }),
        ("more", { w, _ in
            "\(try w.inBatch { try $0.registerDevice(token: "t2", userID: "u1", platform: "web") }) \(try w.inBatch { try $0.registerDevice(token: "t3", userID: "u2", platform: "ios") })"
        }),
        ("another user takes t1", { w, r in "\(try w.inBatch { try $0.registerDevice(token: "t1", userID: "u2", platform: "android") }) " + text(try r.devices(userIDs: ["u1", "u2"])) }),
        ("unregister as the wrong user", { w, _ in "\(try w.inBatch { try $0.unregisterDevice(token: "t2", userID: "u2") })" }),
        ("unregister", { w, r in "\(try w.inBatch { try $0.unregisterDevice(token: "t2", userID: "u1") }) " + text(try r.devices(userIDs: ["u1"])) }),
        ("unregister any owner", { w, _ in "\(try w.inBatch { try $0.unregisterDevice(token: "t3", userID: nil) }) \(try w.inBatch { try $0.unregisterDevice(token: "t3", userID: nil) })" }),
        ("delete a user's devices", { w, r in
            try w.inBatch { try $0.deleteDevices(userID: "u2") }
            return text(try r.devices(userIDs: ["u2"])) + "|" + text(try w.inBatch { try $0.devices(userIDs: ["u1", "u2"]) })
        }),
    ] }

    enum Script: String, CaseIterable, Sendable {
        case credentials, sessions, throttleRows, pushDevices

        var steps: [AccountsStep] {
            switch self {
            case .credentials: credentialSteps
            case .sessions: sessionSteps
            case .throttleRows: throttleSteps
            case .pushDevices: deviceSteps
            }
        }
    }

    @Test("the same script gives the same answers on both engines", arguments: Script.allCases)
    func differential(_ script: Script) throws {
        let (sqlite, postgres) = try transcripts(script.steps)
        for (a, b) in zip(sqlite, postgres) { #expect(a == b, "\(script)") }
        #expect(sqlite.count == postgres.count)
    }

    @Test("a username taken on one node is a conflict on another, even while the first is still committing")
    func usernameAcrossNodes() throws {
        let store = try PGTestStore()
        let other = try PostgresDocumentWriter(url: store.url, ids: DocumentID(), logger: Logger(label: "b"))
        try store.writer.inBatch { try $0.addCredentials(userID: "u1", username: "carol", passwordHash: "h") }
        #expect(throws: StoreError.self) { try other.inBatch { try $0.addCredentials(userID: "u2", username: "CAROL", passwordHash: "h") } }
        // Held open: the second node's insert waits for the first's commit, then finds the name taken.
        let held = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0), done = DispatchGroup()
        store.writer.beforeCommit = { held.signal(); release.wait() }
        let first = HandOver(store.writer), second = HandOver(other)
        let outcomes = HandOver(NSLock())
        nonisolated(unsafe) var results: [String: String] = [:]
        done.enter()
        Thread {
            let r = Result { try first.value.inBatch { try $0.addCredentials(userID: "u3", username: "dave", passwordHash: "h") } }
            outcomes.value.withLock { results["first"] = (try? r.get()) != nil ? "ok" : "failed" }
            done.leave()
        }.start()
        held.wait()
        done.enter()
        Thread {
            let r = Result { try second.value.inBatch { try $0.addCredentials(userID: "u4", username: "Dave", passwordHash: "h") } }
            outcomes.value.withLock { results["second"] = (try? r.get()) != nil ? "ok" : (r.failureValue.map(describe) ?? "") }
            done.leave()
        }.start()
        Thread.sleep(forTimeInterval: 0.3)
        release.signal()
        done.wait()
        store.writer.beforeCommit = nil
        #expect(results["first"] == "ok")
        #expect(results["second"] == "conflict That username is taken.")
        #expect(try store.reader.credentials(username: "DAVE")?.userID == "u3")
    }
}

extension Result {
    var failureValue: Failure? { if case .failure(let e) = self { e } else { nil } }
}
