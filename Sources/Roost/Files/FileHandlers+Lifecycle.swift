import Backup
import Files
import Foundation
import Logging
import Store

extension FileHandlers {
    /// Before the pools start (the writer is still ours): sweeps temporary
    /// files, files without rows and rows without files.
    static func sweep(config: RoostConfig, writer: DocumentWriter, logger: Logger) throws {
        let sweeper = FileSweeper(layout: FileLayout(dataDir: config.dataDir), logger: logger)
        let outcome = try sweeper.sweep(rows: try writer.allFileIDs())
        if !outcome.rowsWithoutFiles.isEmpty {
            logger.warning("file rows without files removed", metadata: ["ids": "\(outcome.rowsWithoutFiles.prefix(20))"])
            try writer.transaction { try writer.removeFileRows(outcome.rowsWithoutFiles) }
        }
    }

    /// Starts libvips, the upload and thumbnail pools, and the thumbnail job
    /// scan that resumes jobs a crash cut short.
    static func start(config: RoostConfig, jobs: CallerJobs, removals: DeferredRemovals, logger: Logger) throws -> FileHandlers {
        let scheduler = ThumbnailScheduler(config: config, pools: jobs.pools, logger: logger)
        try scheduler.start()
        let handlers = FileHandlers(jobs: jobs, config: config, thumbnails: scheduler, removals: removals, logger: logger)
        try handlers.uploads.start()
        scheduler.rescan()
        return handlers
    }

    /// Stops taking uploads; queued ones are dropped, running ones finish (before the writer stops).
    func shutdown() {
        // The loops have stopped: queued uploads were never acknowledged.
        uploads.shutdown(discardingQueued: true)
        thumbnails.shutdown()
    }
}
