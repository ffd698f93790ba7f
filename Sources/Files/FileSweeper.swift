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

    /// `root/<ab>/<cd>/<name>` entries with their names.
    private func entries(under root: String) -> [(path: String, name: String)] {
        let fm = FileManager.default
        var out: [(String, String)] = []
        for a in (try? fm.contentsOfDirectory(atPath: root)) ?? [] {
            for b in (try? fm.contentsOfDirectory(atPath: root + "/" + a)) ?? [] {
                let dir = root + "/" + a + "/" + b
                for name in (try? fm.contentsOfDirectory(atPath: dir)) ?? [] { out.append((dir + "/" + name, name)) }
            }
        }
        return out
    }
}
