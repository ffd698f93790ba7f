import CSodium
import Store

/// The cursor key in SQLite's `_meta` table.
extension CursorSeal {
    /// The database's key (made by migration 10).
    public static func load(_ db: SQLiteConnection) throws -> CursorSeal {
        try CursorSeal(hexKey: try db.prepare("SELECT value FROM _meta WHERE key = 'cursor_key'").firstRow { $0.text(0) })
    }

    /// Makes and stores a new random key (in the caller's transaction).
    static func createKey(_ db: SQLiteConnection) throws {
        precondition(ready, "libsodium unusable")
        var key = [UInt8](repeating: 0, count: keyBytes)
        randombytes_buf(&key, key.count)
        var text = [CChar](repeating: 0, count: keyBytes * 2 + 1)
        sodium_bin2hex(&text, text.count, key, key.count)
        let hex = String(decoding: text.prefix(keyBytes * 2).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        try db.prepare("INSERT OR REPLACE INTO _meta (key, value) VALUES ('cursor_key', ?1)").run([.text(hex)])
    }
}
