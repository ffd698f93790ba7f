import Store

extension SQLiteBackup {
    /// One `_files` row of a database copy: what the backup must hold for it.
    public struct FileRow: Sendable, Equatable {
        public let id: String
        /// The SHA-256 recorded at upload, when the row has one.
        public let sha256: String?
        public let size: Int?
    }

    /// Every file row of the database at `path` (a backup's copy), by id.
    public static func fileRows(_ path: String) throws -> [FileRow] {
        let db = try SQLiteConnection(path: path, readOnly: true)
        return try db.prepare("SELECT id, json_extract(doc, '$.sha256'), json_extract(doc, '$.size') FROM _files ORDER BY id").rows { row in
            FileRow(id: row.text(0), sha256: row.isNull(1) ? nil : row.text(1), size: row.isNull(2) ? nil : Int(row.int(2)))
        }
    }
}
