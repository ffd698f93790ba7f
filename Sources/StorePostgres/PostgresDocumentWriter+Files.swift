import JSON
import Store

/// File metadata rows and thumbnail jobs on the writer, with
/// `DocumentWriter`'s methods and semantics. A file's row, its change row
/// and its thumbnail job commit together; the job is claimed by this node
/// at once (its upload handler queues it locally after the commit), so other
/// nodes polling `_file_jobs` leave it alone unless this node dies.
extension PostgresDocumentWriter {
    /// Records a stored file's metadata and, when `thumbnailJob`, a thumbnail
    /// job claimed by this node, in the current transaction.
    /// - Returns: the metadata document's JSON text.
    public func insertFile(id: String, metadata: FileMetadata, thumbnailJob: Bool, scope: AccessScope) throws -> String {
        let contentType = metadata.contentType
        let (document, now) = try metadata.rowDocument(id: id, scope: scope)
        let text = document.jsonText
        let inserted = try db.first("INSERT INTO _files (id, created_at, doc) VALUES ($1::text, $2::text, $3::json) ON CONFLICT (id) DO NOTHING RETURNING rid",
                                    [.text(id), .text(now), .text(text)]) { $0.int(0) }
        guard inserted != nil else { throw StoreError.conflict("A file with _id \"\(id)\" already exists.") }
        recordChange(FileMetadata.feedCollection, id: id, .create, previousText: nil)
        if thumbnailJob {
            try db.run("""
                INSERT INTO _file_jobs (file_id, content_type, created_at, claimed_by, lease_until)
                VALUES ($1::text, $2::text, $3::text, $4::text, clock_timestamp() + make_interval(secs => $5::numeric))
                ON CONFLICT (file_id) DO UPDATE SET content_type = excluded.content_type, created_at = excluded.created_at,
                                                    claimed_by = excluded.claimed_by, lease_until = excluded.lease_until
                """, [.text(id), .text(contentType), .text(now), .text(jobWorker), .double(claimLease)])
        }
        return text
    }

    /// Deletes file `id`'s row and job: 404 when `scope` may not see it,
    /// 403 when it may see but not change it.
    public func deleteFile(id: String, scope: AccessScope) throws {
        try scope.checkCollectionRead()
        let params = ParameterList([.text(id)])
        let visible = PostgresAccess.sql(scope.readRule, params.bind) ?? "TRUE"
        let canWrite = PostgresAccess.sql(scope.writeRule, params.bind) ?? "TRUE"
        guard let row = try db.first("SELECT \(visible), \(canWrite), d.doc::text FROM _files AS d WHERE d.id = $1::text",
                                     params.values, { ($0.bool(0) ?? false, $0.bool(1) ?? false, $0.text(2) ?? "") }) else {
            throw StoreError.notFound("No file with _id \"\(id)\".")
        }
        try scope.checkFileDelete(id: id, visible: row.0, writable: row.1, document: row.2)
        try removeFileRows([id])
    }

    /// Stores one finished (or failed) thumbnail size in file `id`'s metadata.
    /// The row is locked while it is read and rewritten, so nodes recording
    /// other sizes of the same file at once never lose each other's entry.
    /// The job ends with the commit that leaves no size pending (whoever
    /// holds its claim: the work is done); until then this node's lease is renewed.
    /// - Returns: false when the file was deleted meanwhile.
    @discardableResult
    public func recordThumbnail(id: String, name: String, state: ThumbnailState, sizes: [String]) throws -> Bool {
        let stored: String?? = try db.first("SELECT doc::text FROM _files WHERE id = $1::text FOR UPDATE", [.text(id)]) { $0.text(0) }
        guard let text = stored ?? nil, case .object(let row) = try JSONParser.parse(text) else {
            try db.run("DELETE FROM _file_jobs WHERE file_id = $1::text", [.text(id)])
            return false
        }
        let (document, previous, thumbnails) = FileMetadata.recordingThumbnail(name, state, in: row)
        try db.run("UPDATE _files SET doc = $2::json WHERE id = $1::text", [.text(id), .text(document.jsonText)])
        recordChange(FileMetadata.feedCollection, id: id, .update, previousText: previous.jsonText)
        if sizes.contains(where: { ThumbnailState.isPending(thumbnails[$0]) }) {
            try db.run("UPDATE _file_jobs SET lease_until = clock_timestamp() + make_interval(secs => $3::numeric) WHERE file_id = $1::text AND claimed_by = $2::text",
                       [.text(id), .text(jobWorker), .double(claimLease)])
        } else {
            try db.run("DELETE FROM _file_jobs WHERE file_id = $1::text", [.text(id)])
        }
        return true
    }

    /// Every file id with a row (start-up sweep).
    public func allFileIDs() throws -> Set<String> {
        Set(try db.query("SELECT id FROM _files") { $0.text(0) ?? "" })
    }

    /// Deletes rows and jobs of `ids` (start-up sweep, deletes).
    public func removeFileRows(_ ids: [String]) throws {
        for id in ids {
            let removed: String?? = try db.first("DELETE FROM _files WHERE id = $1::text RETURNING doc::text", [.text(id)]) { $0.text(0) }
            if let text = removed ?? nil {
                recordChange(FileMetadata.feedCollection, id: id, .delete, previousText: text)
            }
            try db.run("DELETE FROM _file_jobs WHERE file_id = $1::text", [.text(id)])
        }
    }

    /// Thumbnail jobs for this node to run, oldest first, each claimed for
    /// `claimLease` seconds (see `PostgresFiles.claimJobs`).
    public func pendingFileJobs(limit: Int) throws -> [FileJobRecord] {
        try PostgresFiles.claimJobs(db, worker: jobWorker, limit: limit, lease: claimLease)
    }

    /// Runs `body` in its own transaction, outside any group commit: its
    /// change rows are written at its end under the feed lock, as a batch's are.
    public func transaction<T>(_ body: () throws -> T) throws -> T {
        if db.inTransaction { return try db.transaction(body) }
        pendingChanges = []
        do {
            return try db.transaction {
                let value = try body()
                try writePendingChanges()
                return value
            }
        } catch {
            pendingChanges = []
            catalog.forgetAll()
            throw Self.wrap(error)
        }
    }
}
