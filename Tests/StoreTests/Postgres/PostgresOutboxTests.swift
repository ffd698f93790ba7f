import Foundation
import JSON
import Logging
import Store
@testable import StorePostgres
import Testing

/// Webhook endpoints and the outbox: the same script on both engines, then
/// what only PostgreSQL has: claims across nodes under a lease.
@Suite("PostgreSQL engine: webhook endpoints and the outbox")
struct PostgresOutboxTests {
    static let later: Int64 = 4_000_000_000_000

    static func endpoint(_ name: String, _ events: [String], url: String = "http://127.0.0.1:9/hook", secret: String = "whsec_a",
                         source: String = "admin") -> WebhookEndpointRecord {
        WebhookEndpointRecord(name: name, url: url, secret: secret, events: events, format: "standard", source: source)
    }

    static func text(_ endpoints: [WebhookEndpointRecord]) -> String {
        endpoints.map { "\($0.name) \($0.url) \($0.secret) \($0.events) \($0.format) \($0.source) \($0.disabledAt == nil ? "on" : "off") \($0.disabledReason ?? "-")" }
            .joined(separator: "; ")
    }

    static func text(_ due: [DueDelivery]) -> String {
        due.map { "\($0.rid) \($0.type) \($0.data) \($0.attempts) \($0.endpoint.name) \($0.eventID.hasPrefix("evt_"))" }.joined(separator: "; ")
    }

    /// Every field of a delivery record (and its attempts), as `text(_: JSONObject?)` prints them.
    static func text(_ d: WebhookDeliveryRecord?) -> String {
        guard let d else { return "nil" }
        var o = JSONObject()
        o["id"] = .string(String(d.rid))
        o["webhookId"] = .string("msg_" + d.eventID)
        o["eventId"] = .string(d.eventID)
        o["type"] = .string(d.type)
        o["endpoint"] = .string(d.endpoint)
        o["status"] = .string(d.status)
        o["attempts"] = .int(d.attempts)
        o["nextAttemptAt"] = d.status == "pending" ? .string(Timestamp.format(Date(timeIntervalSince1970: Double(d.nextAttemptAt) / 1000))) : .null
        o["lastStatus"] = d.lastStatus.map { .int($0) } ?? .null
        o["lastError"] = d.lastError.map { .string($0) } ?? .null
        o["createdAt"] = .string(d.createdAt)
        o["updatedAt"] = .string(d.updatedAt)
        if let data = d.data { o["data"] = data }
        if let log = d.attemptLog {
            o["attemptLog"] = .array(log.map { a in
                var e = JSONObject()
                e["attempt"] = .int(a.attempt)
                e["at"] = .string(a.at)
                e["status"] = a.status.map { .int($0) } ?? .null
                e["error"] = a.error.map { .string($0) } ?? .null
                e["durationMs"] = .int(a.durationMilliseconds)
                return .object(e)
            })
        }
        return text(o)
    }

    /// A delivery as the admin API shows it, with times and random event ids replaced.
    static func text(_ object: JSONObject?) -> String {
        guard var o = object else { return "nil" }
        for key in ["createdAt", "updatedAt"] where o[key] != nil { o[key] = .string("T") }
        // A time taken from the clock (a re-queued delivery is due now); `later` is kept.
        if let next = o["nextAttemptAt"]?.stringValue, next != Timestamp.format(Date(timeIntervalSince1970: Double(later) / 1000)) {
            o["nextAttemptAt"] = .string("now")
        }
        for key in ["webhookId", "eventId"] { o[key] = o[key]?.stringValue.map { .string(String($0.prefix(8))) } }
        if case .array(let log)? = o["attemptLog"] {
            o["attemptLog"] = .array(log.map { entry in
                guard case .object(var a) = entry else { return entry }
                a["at"] = .string("T")
                return .object(a)
            })
        }
        return JSONValue.object(o).jsonText
    }

    static func record(_ w: any DocumentWriting, _ rid: Int64, _ attempt: Int, _ outcome: DeliveryOutcome, status: Int? = 200) throws {
        try w.inBatch { try $0.recordAttempt(rid: rid, attempt: attempt, status: status, error: status == 200 ? nil : "HTTP \(status ?? 0)",
                                             durationMilliseconds: 7, outcome: outcome) }
    }

    static var steps: [AccountsStep] { [
        ("save", { w, r in
            try w.inBatch { w in
                try w.saveWebhookEndpoint(endpoint("b", ["message.created", "messages.updated"]), keepDisabled: false)
                try w.saveWebhookEndpoint(endpoint("a", ["message.created"]), keepDisabled: false)
                try w.saveWebhookEndpoint(endpoint("c", ["*"]), keepDisabled: false)
            }
            return text(try r.webhookEndpoints())
        }),
        ("subscribers", { w, _ in
            try ["message.created", "messages.updated", "zzz"].map { t in "\(try w.inBatch { try $0.hasSubscribers(t) })" }.joined(separator: " ")
        }),
        ("disable c", { w, r in
            "\(try w.inBatch { try $0.setWebhookEndpointDisabled(name: "c", reason: "by hand") }) "
                + "\(try w.inBatch { try $0.setWebhookEndpointDisabled(name: "nope", reason: "x") }) "
                + "\(try w.inBatch { try $0.hasSubscribers("zzz") }) " + text(try w.webhookEndpoints())
        }),
        ("enqueue", { w, _ in
            let one = try w.inBatch { try $0.enqueueEvent(type: "message.created", data: #"{"n":1}"#) }
            let two = try w.inBatch { try $0.enqueueEvent(type: "messages.updated", data: #"{"n":2}"#) }
            let none = try w.inBatch { try $0.enqueueEvent(type: "zzz", data: "{}") }
            return "\(one?.hasPrefix("evt_") ?? false) \(two?.hasPrefix("evt_") ?? false) \(none == nil)"
        }),
        ("pending", { _, r in "\(try r.pendingDeliveryCount()) \(try r.nextDeliveryDue() != nil)" }),
        ("not yet due", { _, r in text(try r.dueDeliveries(now: 0, limit: 10)) }),
        ("due", { _, r in text(try r.dueDeliveries(now: later, limit: 10)) }),
        ("due, limited, again", { _, r in text(try r.dueDeliveries(now: later, limit: 2)) }),
        ("attempts", { w, r in
            try record(w, 1, 1, .delivered)
            try record(w, 2, 1, .retry(atMilliseconds: later), status: 503)
            try record(w, 3, 1, .dead, status: nil)
            return try (1...3).map { text(try r.delivery(rid: $0)) }.joined(separator: "\n")
        }),
        ("after attempts", { _, r in "\(try r.pendingDeliveryCount()) " + text(try r.dueDeliveries(now: later - 1, limit: 10)) }),
        ("list", { _, r in
            try [nil, "pending", "dead", "delivered"].map { s in try r.deliveries(status: s, limit: 10).map { text($0) }.joined(separator: ",") }
                .joined(separator: "\n")
        }),
        ("list limited", { _, r in try r.deliveries(status: nil, limit: 1).map { text($0) }.joined() }),
        ("unknown delivery", { _, r in text(try r.delivery(rid: 99)) }),
        ("requeue", { w, r in
            "\(try w.inBatch { try $0.requeueDelivery(rid: 3) }) \(try w.inBatch { try $0.requeueDelivery(rid: 1) }) " + text(try r.delivery(rid: 3))
        }),
        ("the same attempt again replaces its log line", { w, r in
            _ = try r.dueDeliveries(now: later, limit: 10)
            try record(w, 3, 1, .retry(atMilliseconds: later), status: 500)
            return text(try r.delivery(rid: 3))
        }),
        ("endpoint removed while a delivery is out: the attempt is logged, the state kept", { w, r in
            _ = try r.dueDeliveries(now: later, limit: 10)
            let removed = try w.inBatch { try $0.deleteWebhookEndpoint(name: "b") }
            try record(w, 2, 2, .delivered)
            return "\(removed) " + text(try r.delivery(rid: 2)) + " " + text(try r.dueDeliveries(now: later, limit: 10))
        }),
        ("sync config", { w, r in
            try w.inBatch { try $0.syncConfigWebhookEndpoints([endpoint("x", ["*"], source: "config"), endpoint("y", ["*"], source: "config")]) }
            _ = try w.inBatch { try $0.setWebhookEndpointDisabled(name: "x", reason: "410 Gone") }
            try w.inBatch { try $0.syncConfigWebhookEndpoints([endpoint("x", ["*"], source: "config")]) }
            let kept = text(try r.webhookEndpoints())
            try w.inBatch { try $0.syncConfigWebhookEndpoints([endpoint("x", ["a.b"], secret: "whsec_new", source: "config")]) }
            return kept + "\n" + text(try r.webhookEndpoints())
        }),
        ("sync over an admin endpoint", { w, r in
            try w.inBatch { try $0.syncConfigWebhookEndpoints([endpoint("a", ["*"], source: "config")]) }
            return text(try r.webhookEndpoints())
        }),
    ] }

    @Test("the same script gives the same answers on both engines")
    func differential() throws {
        let (sqlite, postgres) = try transcripts(Self.steps)
        for (a, b) in zip(sqlite, postgres) { #expect(a == b) }
        #expect(sqlite.count == postgres.count)
    }

    /// A reader and a writer that act as one node.
    static func node(_ url: String, _ name: String, lease: Double = 60) throws -> (reader: PostgresDocumentReader, writer: PostgresDocumentWriter) {
        let reader = try PostgresDocumentReader(url: url)
        let writer = try PostgresDocumentWriter(url: url, ids: DocumentID(), logger: Logger(label: name))
        reader.nodeID = name
        reader.claimLease = lease
        writer.nodeID = name
        return (reader, writer)
    }

    @Test("three nodes polling at once send each delivery once per endpoint")
    func claimedOnce() throws {
        let store = try PGTestStore()
        try store.writer.inBatch { w in
            try w.saveWebhookEndpoint(Self.endpoint("one", ["*"]), keepDisabled: false)
            try w.saveWebhookEndpoint(Self.endpoint("two", ["*"]), keepDisabled: false)
            for i in 0..<150 { _ = try w.enqueueEvent(type: "t", data: "{\"i\":\(i)}") }
        }
        let nodes = try (0..<3).map { HandOver(try Self.node(store.url, "node\($0)")) }
        let lock = HandOver(NSLock())
        nonisolated(unsafe) var sent: [[Int64]] = Array(repeating: [], count: nodes.count)
        let group = DispatchGroup()
        for (n, node) in nodes.enumerated() {
            group.enter()
            Thread {
                defer { group.leave() }
                for _ in 0..<500 {
                    guard let due = try? node.value.reader.dueDeliveries(now: Self.later, limit: 7), !due.isEmpty else { return }
                    for d in due {
                        lock.value.withLock { sent[n].append(d.rid) }
                        try? Self.record(node.value.writer, d.rid, d.attempts + 1, .delivered)
                    }
                }
            }.start()
        }
        group.wait()
        let all = sent.flatMap { $0 }
        #expect(all.count == 300, "sent \(all.count)")
        #expect(Set(all).count == 300, "a delivery was sent twice")
        #expect(sent.filter { !$0.isEmpty }.count >= 2, "the claims did not interleave: \(sent.map(\.count))")
        let counts = try store.writer.db.first("""
            SELECT (SELECT count(*) FROM _webhook_deliveries WHERE status = 'delivered' AND attempts = 1 AND claimed_by IS NULL),
                   (SELECT count(*) FROM _webhook_attempts)
            """) { [$0.int(0), $0.int(1)] }
        #expect(counts == [300, 300])
    }

    @Test("a node renews its own claims; a lease that passed goes to another node, and the first node's late attempt is ignored")
    func leaseExpiry() throws {
        let store = try PGTestStore()
        try store.writer.inBatch { w in
            try w.saveWebhookEndpoint(Self.endpoint("one", ["*"]), keepDisabled: false)
            _ = try w.enqueueEvent(type: "t", data: "{}")
        }
        let a = try Self.node(store.url, "a", lease: 1.5), b = try Self.node(store.url, "b")
        func lease() throws -> String { try store.writer.db.first("SELECT lease_until::text FROM _webhook_deliveries") { $0.text(0) ?? "" } ?? "" }
        #expect(try a.reader.dueDeliveries(now: Self.later, limit: 5).map(\.rid) == [1])
        let first = try lease()
        #expect(try b.reader.dueDeliveries(now: Self.later, limit: 5).isEmpty, "claimed while the lease held")
        #expect(try a.reader.dueDeliveries(now: Self.later, limit: 5).map(\.rid) == [1], "the holder's next poll sees its own claim")
        #expect(try lease() > first, "the holder's poll renewed the lease")
        Thread.sleep(forTimeInterval: 2.0)
        let taken = try b.reader.dueDeliveries(now: Self.later, limit: 5)
        #expect(taken.map(\.rid) == [1])
        try Self.record(a.writer, 1, 1, .delivered)
        #expect(Self.text(try store.reader.delivery(rid: 1)).contains(#""status":"pending","attempts":0"#), "the stale attempt counted")
        #expect(Self.text(try store.reader.delivery(rid: 1)).contains(#""attemptLog":[]"#))
        try Self.record(b.writer, 1, 1, .retry(atMilliseconds: 0), status: 502)
        #expect(Self.text(try store.reader.delivery(rid: 1)).contains(#""status":"pending","attempts":1"#))
        // Recording gave the claim up: any node may take the retry at once.
        #expect(try a.reader.dueDeliveries(now: Self.later, limit: 5).map(\.attempts) == [1])
        try Self.record(a.writer, 1, 2, .delivered)
        let done = Self.text(try store.reader.delivery(rid: 1))
        #expect(done.contains(#""status":"delivered","attempts":2"#), "\(done)")
        #expect(try b.reader.dueDeliveries(now: Self.later, limit: 5).isEmpty)
    }

    @Test("a node that stops gives its claims up: another node need not wait for the lease")
    func release() throws {
        let store = try PGTestStore()
        try store.writer.inBatch { w in
            try w.saveWebhookEndpoint(Self.endpoint("one", ["*"]), keepDisabled: false)
            for _ in 0..<3 { _ = try w.enqueueEvent(type: "t", data: "{}") }
        }
        let a = try Self.node(store.url, "a"), b = try Self.node(store.url, "b")
        #expect(try a.reader.dueDeliveries(now: Self.later, limit: 2).map(\.rid) == [1, 2])
        #expect(try b.reader.dueDeliveries(now: Self.later, limit: 5).map(\.rid) == [3])
        #expect(try a.reader.releaseDeliveryClaims() == 2)
        #expect(try b.reader.dueDeliveries(now: Self.later, limit: 5).map(\.rid) == [1, 2, 3])
    }
}
