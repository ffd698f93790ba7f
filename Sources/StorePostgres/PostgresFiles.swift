import Store

/// SQL for file metadata and thumbnail jobs on PostgreSQL, shared by the
/// reader and the writer: `_files` rows hold each file's metadata document
/// (with `_acl`, guarded by the same access SQL as documents).
///
/// Thumbnail jobs are claims, not a list: `pendingJobs` hands a node only
/// jobs nobody else holds (`FOR UPDATE SKIP LOCKED`), those whose lease
/// passed (a node killed mid-job), and its own (renewing their lease), so
/// several nodes polling the same table make each thumbnail once.
enum PostgresFiles {
    static func visible(_ db: PGConnection, id: String, scope: AccessScope) throws -> String? {
        try scope.checkCollectionRead()
        let params = ParameterList([.text(id)])
        let visible = PostgresAccess.sql(scope.readRule, params.bind).map { " AND \($0)" } ?? ""
        let text: String?? = try db.first("SELECT d.doc::text FROM _files AS d WHERE d.id = $1::text\(visible)", params.values) { $0.text(0) }
        return text ?? nil
    }

    /// What serving a file needs, extracted by PostgreSQL (no document parse in Swift).
    static func serving(_ db: PGConnection, id: String, scope: AccessScope) throws -> StoredFileInfo? {
        typealias Key = FileMetadata.Key
        try scope.checkCollectionRead()
        let params = ParameterList([.text(id)])
        let visible = PostgresAccess.sql(scope.readRule, params.bind).map { " AND \($0)" } ?? ""
        let keys = [Key.contentType, Key.size, Key.sha256, Key.name, Key.width].map { params.bind(.text($0)) }
        return try db.first("""
            SELECT d.doc ->> \(keys[0]), d.doc ->> \(keys[1]), d.doc ->> \(keys[2]), d.doc ->> \(keys[3]), (d.doc -> \(keys[4])) IS NOT NULL
            FROM _files AS d WHERE d.id = $1::text\(visible)
            """, params.values) { row in
            StoredFileInfo(contentType: row.text(0) ?? "application/octet-stream", size: row.text(1).flatMap { Int($0) } ?? 0,
                           sha256: row.text(2) ?? "", name: row.text(3), isImage: row.bool(4) ?? false)
        }
    }

    /// Claims up to `limit` thumbnail jobs for `worker`, oldest first, for
    /// `lease` seconds: jobs nobody holds, whose lease passed, or that
    /// `worker` already holds (their lease renewed).
    static func claimJobs(_ db: PGConnection, worker: String, limit: Int, lease: Double) throws -> [FileJobRecord] {
        try db.query("""
            UPDATE _file_jobs AS j SET claimed_by = $1::text, lease_until = clock_timestamp() + make_interval(secs => $2::numeric)
             WHERE j.file_id IN (SELECT file_id FROM _file_jobs
                                  WHERE lease_until IS NULL OR lease_until < clock_timestamp() OR claimed_by = $1::text
                                  ORDER BY created_at, file_id LIMIT $3::bigint FOR UPDATE SKIP LOCKED)
            RETURNING j.file_id, j.content_type, j.created_at
            """, [.text(worker), .double(lease), .int(Int64(limit))]) { ($0.text(2) ?? "", FileJobRecord(fileID: $0.text(0) ?? "", contentType: $0.text(1) ?? "")) }
            .sorted { ($0.0, $0.1.fileID) < ($1.0, $1.1.fileID) }
            .map(\.1)
    }
}

extension PostgresDocumentReader {
    /// The metadata of file `id`, or nil when absent or not readable by `scope`.
    public func file(id: String, scope: AccessScope) throws -> String? {
        try PostgresFiles.visible(db, id: id, scope: scope)
    }

    /// What serving file `id` needs, or nil when absent or not readable by `scope`.
    public func fileForServing(id: String, scope: AccessScope) throws -> StoredFileInfo? {
        try PostgresFiles.serving(db, id: id, scope: scope)
    }

    /// Thumbnail jobs for this node to run, oldest first: each claimed for
    /// `claimLease` seconds (see `PostgresFiles.claimJobs`).
    public func pendingFileJobs(limit: Int) throws -> [FileJobRecord] {
        try PostgresFiles.claimJobs(db, worker: jobWorker, limit: limit, lease: claimLease)
    }
}
