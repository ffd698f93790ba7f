import Foundation
import JSON
import Store
import Testing

/// Both engines' writers and readers are driven through the store seam
/// (`any DocumentWriting`, `any DocumentReading`): their conformances in
/// `PostgresConformance.swift` keep the signatures equal. The differential
/// tests run one script through it against both engines.
extension WriterConnection {
    /// One operation in its own group commit.
    func one<T>(_ operation: @escaping (any DocumentWriting) throws -> T) -> Result<T, any Error> { commitBatch([operation])[0] }

    /// Runs `body` as one operation of a group commit; its error is thrown.
    func inBatch<T>(_ body: @escaping (any DocumentWriting) throws -> T) throws -> T { try one(body).get() }
}

/// Runs `script` on a fresh SQLite store and a fresh PostgreSQL database
/// and expects the same transcript, line by line.
/// - Returns: SQLite's transcript, for checks of what the script exercised.
@discardableResult
func expectSameOnBothEngines(_ script: (any DocumentWriting, any DocumentReading) -> [String]) throws -> [String] {
    let sqlite = try TestStore(), postgres = try PGTestStore()
    let expected = script(sqlite.writer, sqlite.reader)
    let got = script(postgres.writer, postgres.reader)
    #expect(got.count == expected.count)
    for (e, g) in zip(expected, got) { #expect(g == e) }
    return expected
}

/// An outcome as comparable text: timestamps (which differ by when each
/// engine ran) replaced, errors by type and message.
func outcome<T>(_ result: Result<T, any Error>, _ show: (T) -> String = { "\($0)" }) -> String {
    switch result {
    case .success(let value): return "ok " + withoutTimestamps(show(value))
    case .failure(let error): return "\(type(of: error)): \(error)"
    }
}

func outcome<T>(_ body: () throws -> T, _ show: (T) -> String = { "\($0)" }) -> String {
    outcome(Result { try body() }, show)
}

func withoutTimestamps(_ text: String) -> String {
    text.replacingOccurrences(of: #"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z"#, with: "<time>", options: .regularExpression)
}

/// A mutable value handed between test threads (each side touches it only
/// before a semaphore signal or after a wait).
final class Shared<T>: @unchecked Sendable {
    var value: T
    init(_ value: T) { self.value = value }
}
