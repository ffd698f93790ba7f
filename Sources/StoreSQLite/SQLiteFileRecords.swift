import JSON
import Store

/// SQL for the file store's metadata: `_files` rows hold each file's
/// metadata document (with `_acl`, so the same `AccessScope` SQL guards
/// them), `_file_jobs` the durable thumbnail jobs.
enum FileSQL {
    static func visible(_ db: SQLiteConnection, id: String, scope: AccessScope) throws -> String? {
        try scope.checkCollectionRead()
        var params: [SQLValue] = [.text(id)]
        let bind = { (v: SQLValue) -> String in params.append(v); return "?\(params.count)" }
        let visible = scope.readPredicate(bind).map { " AND \($0)" } ?? ""
        return try db.prepare("SELECT d.doc FROM _files AS d WHERE d.id = ?1\(visible)").firstRow(params) { $0.text(0) }
    }

    /// What serving a file needs, extracted by SQLite (no document parse in Swift).
    static func serving(_ db: SQLiteConnection, id: String, scope: AccessScope) throws -> StoredFileInfo? {
        typealias Key = FileMetadata.Key
        let path = FileMetadata.path
        try scope.checkCollectionRead()
        var params: [SQLValue] = [.text(id)]
        let bind = { (v: SQLValue) -> String in params.append(v); return "?\(params.count)" }
        let visible = scope.readPredicate(bind).map { " AND \($0)" } ?? ""
        return try db.prepare("""
            SELECT json_extract(d.doc, '\(path(Key.contentType))'), json_extract(d.doc, '\(path(Key.size))'),
                   json_extract(d.doc, '\(path(Key.sha256))'), json_extract(d.doc, '\(path(Key.name))'),
                   json_type(d.doc, '\(path(Key.width))') IS NOT NULL
            FROM _files AS d WHERE d.id = ?1\(visible)
            """).firstRow(params) { row in
            StoredFileInfo(contentType: row.isNull(0) ? "application/octet-stream" : row.text(0), size: Int(row.int(1)),
                           sha256: row.isNull(2) ? "" : row.text(2), name: row.isNull(3) ? nil : row.text(3), isImage: row.int(4) != 0)
        }
    }

    static func pendingJobs(_ db: SQLiteConnection, limit: Int) throws -> [FileJobRecord] {
        try db.prepare("SELECT file_id, content_type FROM _file_jobs ORDER BY created_at LIMIT ?1")
            .rows([.int(Int64(limit))]) { FileJobRecord(fileID: $0.text(0), contentType: $0.text(1)) }
    }
}

extension DocumentReader {
    /// The metadata of file `id`, or nil when absent or not readable by `scope`.
    public func file(id: String, scope: AccessScope) throws -> String? {
        try FileSQL.visible(db, id: id, scope: scope)
    }

    /// What serving file `id` needs, or nil when absent or not readable by `scope`.
    public func fileForServing(id: String, scope: AccessScope) throws -> StoredFileInfo? {
        try FileSQL.serving(db, id: id, scope: scope)
    }

    /// Thumbnail jobs not yet done, oldest first.
    public func pendingFileJobs(limit: Int) throws -> [FileJobRecord] {
        try FileSQL.pendingJobs(db, limit: limit)
    }
}

extension DocumentWriter {
    /// Records a stored file's metadata and, when `thumbnailJob`, a durable
    /// thumbnail job, in the current transaction.
    /// - Returns: the metadata document's JSON text.
    public func insertFile(id: String, metadata: FileMetadata, thumbnailJob: Bool, scope: AccessScope) throws -> String {
        let contentType = metadata.contentType
        let (document, now) = try metadata.rowDocument(id: id, scope: scope)
        let text = document.jsonText
        do {
            try db.prepare("INSERT INTO _files (id, created_at, doc) VALUES (?1, ?2, ?3)").run([.text(id), .text(now), .text(text)])
        } catch let error as SQLiteError where error.isUniqueViolation {
            throw StoreError.conflict("A file with _id \"\(id)\" already exists.")
        }
        try recordChange(FileMetadata.feedCollection, id: id, .create, previous: nil)
        if thumbnailJob {
            try db.prepare("INSERT OR REPLACE INTO _file_jobs (file_id, content_type, created_at) VALUES (?1, ?2, ?3)")
                .run([.text(id), .text(contentType), .text(now)])
        }
        return text
    }

    /// Deletes file `id`'s row and job: 404 when `scope` may not see it,
    /// 403 when it may see but not change it.
    public func deleteFile(id: String, scope: AccessScope) throws {
        try scope.checkCollectionRead()
        var params: [SQLValue] = [.text(id)]
        let bind = { (v: SQLValue) -> String in params.append(v); return "?\(params.count)" }
        let visible = scope.readPredicate(bind) ?? "1"
        let canWrite = scope.writePredicate(bind) ?? "1"
        guard let row = try db.prepare("SELECT \(visible), \(canWrite), d.doc FROM _files AS d WHERE d.id = ?1")
            .firstRow(params, { ($0.int(0) != 0, $0.int(1) != 0, $0.text(2)) }) else {
            throw StoreError.notFound("No file with _id \"\(id)\".")
        }
        try scope.checkFileDelete(id: id, visible: row.0, writable: row.1, document: row.2)
        try removeFileRows([id])
    }

    /// Stores one finished (or failed) thumbnail size in file `id`'s metadata;
    /// the job ends with the commit that leaves no size pending, so a crash
    /// before it finds the job again on restart.
    /// - Parameter sizes: the sizes the job makes (the configured ones); entries of
    ///   sizes no longer configured do not keep the job alive.
    /// - Returns: false when the file was deleted meanwhile.
    @discardableResult
    public func recordThumbnail(id: String, name: String, state: ThumbnailState, sizes: [String]) throws -> Bool {
        guard let text = try db.prepare("SELECT doc FROM _files WHERE id = ?1").firstRow([.text(id)], { $0.text(0) }),
              case .object(let stored) = try JSONParser.parse(text) else {
            try db.prepare("DELETE FROM _file_jobs WHERE file_id = ?1").run([.text(id)])
            return false
        }
        let (document, previous, thumbnails) = FileMetadata.recordingThumbnail(name, state, in: stored)
        try db.prepare("UPDATE _files SET doc = ?2 WHERE id = ?1").run([.text(id), .text(document.jsonText)])
        try recordChange(FileMetadata.feedCollection, id: id, .update, previous: previous)
        let pending = sizes.contains { ThumbnailState.isPending(thumbnails[$0]) }
        if !pending { try db.prepare("DELETE FROM _file_jobs WHERE file_id = ?1").run([.text(id)]) }
        return true
    }

    /// Every file id with a row (start-up sweep).
    public func allFileIDs() throws -> Set<String> {
        Set(try db.prepare("SELECT id FROM _files").rows { $0.text(0) })
    }

    /// Deletes rows and jobs of `ids` (start-up sweep, deletes).
    public func removeFileRows(_ ids: [String]) throws {
        for id in ids {
            if let text = try db.prepare("DELETE FROM _files WHERE id = ?1 RETURNING doc").firstRow([.text(id)], { $0.text(0) }) {
                try recordChange(FileMetadata.feedCollection, id: id, .delete, previousText: text)
            }
            try db.prepare("DELETE FROM _file_jobs WHERE file_id = ?1").run([.text(id)])
        }
    }

    /// Thumbnail jobs not yet done, oldest first.
    public func pendingFileJobs(limit: Int) throws -> [FileJobRecord] {
        try FileSQL.pendingJobs(db, limit: limit)
    }

    /// Runs `body` in its own transaction, outside any group commit (start-up only).
    public func transaction<T>(_ body: () throws -> T) throws -> T { try db.transaction(body) }
}
