import JSON
import Store
@testable import StorePostgres

/// One scripted step of a differential test: what it did, as text to compare.
typealias AccountsStep = (name: String, run: (any DocumentWriting, any DocumentReading) throws -> String)

/// Runs `steps` on a fresh SQLite store and a fresh PostgreSQL database and
/// returns each engine's transcript ("name: answer" or "name: error …").
func transcripts(_ steps: [AccountsStep]) throws -> (sqlite: [String], postgres: [String]) {
    let sqlite = try TestStore()
    let postgres = try PGTestStore()
    func run(_ w: any DocumentWriting, _ r: any DocumentReading) -> [String] {
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
