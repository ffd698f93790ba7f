import JSON
import Store
@testable import StorePostgres

/// Every method of the accounts, throttle, push, webhook and admin-listing
/// area, declared once as the SQLite engine declares it. Both engines'
/// types conform with empty extensions, so a signature that differs on
/// PostgreSQL does not compile; the differential tests drive both through it.
protocol AccountsWriterSurface: AnyObject {
    func session(tokenHash: String, now: Int64) throws -> SessionRecord?
    func credentials(username: String) throws -> CredentialRecord?
    func addCredentials(userID: String, username: String, passwordHash: String) throws
    func setPassword(userID: String, passwordHash: String) throws
    func createSession(userID: String, tokenHash: String, now: Int64, lifetime: Int64) throws
    func renewSession(tokenHash: String, now: Int64, lifetime: Int64) throws
    func deleteSession(tokenHash: String) throws -> Bool
    func deleteSessions(userID: String, keeping: String?) throws
    func deleteCredentials(userID: String) throws
    func revokeSessions(userID: String, id: String?) throws -> Int
    func loginCounter(_ key: String) throws -> (failures: Int64, windowStart: Int64, blockedUntil: Int64)?
    func saveLoginCounter(_ key: String, failures: Int64, windowStart: Int64, blockedUntil: Int64) throws
    func deleteLoginCounter(_ key: String) throws
    func pruneLoginCounters(windowStartBefore: Int64, now: Int64, limit: Int) throws
    func isKnownLoginAddress(userID: String, address: String, since: Int64) throws -> Bool
    func rememberLoginAddress(userID: String, address: String, now: Int64, forgetBefore: Int64) throws
    func registerDevice(token: String, userID: String, platform: String) throws -> Bool
    func unregisterDevice(token: String, userID: String?) throws -> Bool
    func devices(userIDs: [String]) throws -> [PushDevice]
    func deleteDevices(userID: String) throws
    func webhookEndpoints() throws -> [WebhookEndpointRecord]
    func saveWebhookEndpoint(_ e: WebhookEndpointRecord, keepDisabled: Bool) throws
    func syncConfigWebhookEndpoints(_ endpoints: [WebhookEndpointRecord]) throws
    func deleteWebhookEndpoint(name: String) throws -> Bool
    func setWebhookEndpointDisabled(name: String, reason: String?) throws -> Bool
    func hasSubscribers(_ type: String) throws -> Bool
    func enqueueEvent(type: String, data: String) throws -> String?
    func recordAttempt(rid: Int64, attempt: Int, status: Int?, error: String?, durationMilliseconds: Int, outcome: DeliveryOutcome) throws
    func requeueDelivery(rid: Int64) throws -> Bool

    /// Runs `body` as one operation of a group commit.
    func inBatch<T>(_ body: @escaping (any AccountsWriterSurface) throws -> T) throws -> T
}

/// The reader's side of the same area.
protocol AccountsReaderSurface: AnyObject {
    func session(tokenHash: String, now: Int64) throws -> SessionRecord?
    func credentials(username: String) throws -> CredentialRecord?
    func credentials(userID: String) throws -> CredentialRecord?
    func sessions(userID: String, now: Int64) throws -> [SessionSummary]
    func filePage(limit: Int, skip: Int) throws -> (documents: [String], total: Int)
    func dueDeliveries(now: Int64, limit: Int) throws -> [DueDelivery]
    func nextDeliveryDue() throws -> Int64?
    func deliveries(status: String?, limit: Int) throws -> [JSONObject]
    func delivery(rid: Int64) throws -> JSONObject?
    func pendingDeliveryCount() throws -> Int
    func webhookEndpoints() throws -> [WebhookEndpointRecord]
    func devices(userIDs: [String]) throws -> [PushDevice]
    func collectionSummaries() throws -> [(name: String, count: Int)]
    func collectionDetails() throws -> [CollectionDetail]
}

extension DocumentWriter: AccountsWriterSurface {
    func inBatch<T>(_ body: @escaping (any AccountsWriterSurface) throws -> T) throws -> T {
        try commitBatch([{ (w: DocumentWriter) in try body(w) }])[0].get()
    }
}

extension PostgresDocumentWriter: AccountsWriterSurface {
    func inBatch<T>(_ body: @escaping (any AccountsWriterSurface) throws -> T) throws -> T {
        try commitBatch([{ (w: PostgresDocumentWriter) in try body(w) }])[0].get()
    }
}

extension DocumentReader: AccountsReaderSurface {}
extension PostgresDocumentReader: AccountsReaderSurface {}

/// One scripted step of a differential test: what it did, as text to compare.
typealias AccountsStep = (name: String, run: (any AccountsWriterSurface, any AccountsReaderSurface) throws -> String)

/// Runs `steps` on a fresh SQLite store and a fresh PostgreSQL database and
/// returns each engine's transcript ("name: answer" or "name: error …").
func transcripts(_ steps: [AccountsStep]) throws -> (sqlite: [String], postgres: [String]) {
    let sqlite = try TestStore()
    let postgres = try PGTestStore()
    func run(_ w: any AccountsWriterSurface, _ r: any AccountsReaderSurface) -> [String] {
        steps.map { step in
            do { return "\(step.name): \(try step.run(w, r))" } catch { return "\(step.name): error \(describe(error))" }
        }
    }
    return (run(sqlite.writer, sqlite.reader), run(postgres.writer, postgres.reader))
}

/// An error as the API would tell it apart: its kind and message.
func describe(_ error: any Error) -> String {
    switch error {
    case StoreError.conflict(let m): "conflict \(m)"
    case StoreError.notFound(let m): "notFound \(m)"
    case StoreError.invalid(let m): "invalid \(m)"
    default: "other \(type(of: error))"
    }
}
