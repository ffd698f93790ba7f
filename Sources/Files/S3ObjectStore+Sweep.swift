import Foundation

/// The start-up sweep of a bucket: local temporary and staging files go;
/// objects of ids without a row, older than `orphanGrace`, are deleted (an
/// upload whose row never committed, or a delete cut short; see `S3Settings.orphanGraceSeconds`). Rows whose
/// original is missing are logged, not deleted: the bucket is shared by
/// every node and the rows stay the record of what should be there.
extension S3ObjectStore {
    public func sweep(rows: Set<String>) throws -> FileSweeper.Outcome {
        try prepare()
        var outcome = FileSweeper.Outcome()
        for dir in [layout.tmp, staging] {
            for name in (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? [] {
                unlink(dir + "/" + name)
                outcome.temporaryRemoved += 1
            }
        }
        let objects = try guarded("sweep listing", "*") { try client.list(prefix: keys.root) }
        let plan = Self.orphans(objects, rows: rows, keys: keys, now: Date(), grace: TimeInterval(client.settings.orphanGraceSeconds))
        for key in plan.doomed {
            do {
                try client.delete(key)
                if key.hasSuffix("/original") { outcome.orphanFilesRemoved += 1 } else { outcome.orphanThumbnailsRemoved += 1 }
            } catch {
                logger.warning("orphan object not removed", metadata: ["key": "\(key)", "error": "\(error)"])
            }
        }
        let missing = rows.subtracting(plan.originals)
        if !missing.isEmpty {
            logger.warning("file rows whose original is not in the bucket", metadata: [
                "count": "\(missing.count)", "ids": "\(missing.sorted().prefix(20))",
            ])
        }
        if outcome.orphanFilesRemoved + outcome.orphanThumbnailsRemoved > 0 {
            logger.notice("bucket swept", metadata: [
                "orphan_files": "\(outcome.orphanFilesRemoved)", "orphan_thumbnails": "\(outcome.orphanThumbnailsRemoved)",
            ])
        }
        return outcome
    }

    /// Which keys to delete: those of ids without a row whose newest object
    /// is at least `grace` old; and which ids have an original.
    public static func orphans(_ objects: [(key: String, modified: Date)], rows: Set<String>, keys: S3Keys, now: Date,
                               grace: TimeInterval) -> (doomed: [String], originals: Set<String>) {
        var byID: [String: [(key: String, modified: Date)]] = [:]
        var originals = Set<String>()
        for object in objects {
            guard let id = keys.id(of: object.key) else { continue }
            byID[id, default: []].append(object)
            if object.key == keys.original(id) { originals.insert(id) }
        }
        var doomed: [String] = []
        for (id, group) in byID where !rows.contains(id) {
            let newest = group.map(\.modified).max() ?? .distantPast
            if now.timeIntervalSince(newest) >= grace { doomed += group.map(\.key) }
        }
        return (doomed.sorted(), originals)
    }
}
