import Foundation
import Store

/// A thumbnail job one node claimed: it is that node's until `leaseUntil`.
public struct FileJobClaim: Sendable, Equatable {
    public let fileID: String
    public let contentType: String
}

/// Thumbnail jobs on PostgreSQL, each made once across nodes.
///
/// A node claims with one statement, `UPDATE … WHERE file_id IN (SELECT …
/// FOR UPDATE SKIP LOCKED LIMIT n)`: nodes claiming at the same moment skip
/// each other's rows instead of waiting or taking the same ones. A claim is
/// a lease: a node killed mid-job loses its jobs to another node once the
/// lease has passed, and finishing is accepted only from the node that
/// still holds the claim.
extension PostgresDocumentWriter {
    /// Adds a thumbnail job for `fileID` (in the caller's batch), unless one is waiting.
    public func enqueueFileJob(fileID: String, contentType: String) throws {
        try db.run("INSERT INTO _file_jobs (file_id, content_type, created_at) VALUES ($1::text, $2::text, $3::text) ON CONFLICT (file_id) DO NOTHING",
                   [.text(fileID), .text(contentType), .text(Timestamp.now())])
    }

    /// Claims up to `limit` jobs nobody holds (or whose lease passed) for `worker`, oldest first, for `lease` seconds.
    public func claimFileJobs(worker: String, limit: Int, lease: Double) throws -> [FileJobClaim] {
        try db.query("""
            UPDATE _file_jobs AS j SET claimed_by = $1::text, lease_until = clock_timestamp() + make_interval(secs => $2::numeric)
             WHERE j.file_id IN (SELECT file_id FROM _file_jobs
                                  WHERE lease_until IS NULL OR lease_until < clock_timestamp()
                                  ORDER BY created_at, file_id LIMIT $3::bigint FOR UPDATE SKIP LOCKED)
            RETURNING j.file_id, j.content_type
            """, [.text(worker), .double(lease), .int(Int64(limit))]) { FileJobClaim(fileID: $0.text(0) ?? "", contentType: $0.text(1) ?? "") }
    }

    /// Removes a finished job if `worker` still holds its claim.
    /// - Returns: false when the lease passed and another node took the job.
    public func finishFileJob(fileID: String, worker: String) throws -> Bool {
        !(try db.query("DELETE FROM _file_jobs WHERE file_id = $1::text AND claimed_by = $2::text RETURNING 1",
                       [.text(fileID), .text(worker)]) { _ in () }).isEmpty
    }
}
