import CPostgresShim

/// libpq, loaded with `dlopen` at the first connection (`CPostgresShim`), so
/// a daemon on SQLite maps none of its libraries.
enum PGLibrary {
    /// Loads libpq once per process; a failure (libpq5 not installed, or a
    /// library that is not libpq) is a `PGError` naming the reason.
    static func load() throws {
        var reason = [CChar](repeating: 0, count: 512)
        guard roost_pq_load(&reason, reason.count) == 0 else {
            throw PGError(sqlState: "", message: String(decoding: reason.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
    }
}
