import Foundation
import Logging

/// The start-up sweep: after a crash, the file store may hold temporary
/// files, files whose row was never committed (crash between rename and
/// COMMIT) and thumbnails of deleted files. Rows are committed only after
/// their file is in place, so a row without its file means the file was lost
/// outside Roost; such rows are reported for deletion.
public struct FileSweeper {
    public let layout: FileLayout
    public let logger: Logger

    public init(layout: FileLayout, logger: Logger) {
        self.layout = layout
        self.logger = logger
    }

    public struct Outcome: Sendable {
        public var temporaryRemoved = 0
        public var orphanFilesRemoved = 0
        public var orphanThumbnailsRemoved = 0
        /// Rows whose file is missing: delete them.
        public var rowsWithoutFiles: [String] = []
    }

    /// Sweeps the store against `rows`, the ids that have metadata rows.
    public func sweep(rows: Set<String>) throws -> Outcome {
        try layout.prepare()
        let fm = FileManager.default
        var outcome = Outcome()
        moveFromTwoLevelLayout()
        for name in (try? fm.contentsOfDirectory(atPath: layout.tmp)) ?? [] {
            unlink(layout.tmp + "/" + name)
            outcome.temporaryRemoved += 1
        }
        var onDisk = Set<String>()
        for (path, id) in entries(under: layout.objects) {
            if rows.contains(id) {
                onDisk.insert(id)
            } else {
                unlink(path)
                outcome.orphanFilesRemoved += 1
            }
        }
        for (path, id) in entries(under: layout.thumbs) where !onDisk.contains(id) {
            try? fm.removeItem(atPath: path)
            outcome.orphanThumbnailsRemoved += 1
        }
        outcome.rowsWithoutFiles = rows.subtracting(onDisk).sorted()
        if outcome.temporaryRemoved + outcome.orphanFilesRemoved + outcome.orphanThumbnailsRemoved + outcome.rowsWithoutFiles.count > 0 {
            logger.notice("file store swept", metadata: [
                "temporary": "\(outcome.temporaryRemoved)", "orphan_files": "\(outcome.orphanFilesRemoved)",
                "orphan_thumbnails": "\(outcome.orphanThumbnailsRemoved)", "rows_without_files": "\(outcome.rowsWithoutFiles.count)",
            ])
        }
        return outcome
    }

    /// `root/<ab>/<name>` entries with their names.
    private func entries(under root: String) -> [(path: String, name: String)] {
        let fm = FileManager.default
        var out: [(String, String)] = []
        for a in (try? fm.contentsOfDirectory(atPath: root)) ?? [] {
            let dir = root + "/" + a
            for name in (try? fm.contentsOfDirectory(atPath: dir)) ?? [] { out.append((dir + "/" + name, name)) }
        }
        return out
    }

    /// Stores written before 2026-11-22 used `<ab>/<cd>/<id>` (two levels);
    /// the first level is the same, so each entry moves up one directory.
    /// Idempotent: a crash halfway leaves entries that the next start moves.
    func moveFromTwoLevelLayout() {
        let fm = FileManager.default
        var moved = 0
        for root in [layout.objects, layout.thumbs] {
            for a in (try? fm.contentsOfDirectory(atPath: root)) ?? [] {
                let top = root + "/" + a
                for b in (try? fm.contentsOfDirectory(atPath: top)) ?? [] where b.utf8.count == 2 {
                    let old = top + "/" + b
                    for name in (try? fm.contentsOfDirectory(atPath: old)) ?? [] where rename(old + "/" + name, top + "/" + name) == 0 {
                        moved += 1
                    }
                    rmdir(old)
                }
                if moved > 0 { DurableFile.syncDirectory(top) }
            }
        }
        if moved > 0 { logger.notice("file store moved to the one-level layout", metadata: ["entries": "\(moved)"]) }
    }
}
