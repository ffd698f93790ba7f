import Backup
import Files
import Foundation
import Logging
import Store

extension FileHandlers {
    /// The configured object store. With `files_store: s3` the settings are
    /// checked and the bucket must answer a signed listing, so a missing
    /// bucket or bad credentials stop the start with a clear message.
    static func objectStore(config: RoostConfig, removals: DeferredRemovals, logger: Logger) throws -> any ObjectStore {
        let layout = FileLayout(dataDir: config.dataDir)
        switch config.filesStore {
        case .local:
            return LocalObjectStore(layout: layout, logger: logger, removePaths: { removals.remove($0) })
        case .s3:
            if let problem = config.s3.problem { throw RoostConfig.Invalid("files_store: s3: \(problem)") }
            let store = S3ObjectStore(settings: config.s3, layout: layout, logger: logger)
            try store.prepare()
            do { try store.client.checkBucket() } catch {
                throw RoostConfig.Invalid("files_store: s3: bucket \"\(config.s3.bucket)\" at \(config.s3.endpoint) cannot be used: \(error)")
            }
            logger.info("files are stored in S3", metadata: ["endpoint": "\(config.s3.endpoint)", "bucket": "\(config.s3.bucket)",
                                                           "prefix": "\(store.keys.root)"])
            return store
        }
    }

    /// Before the pools start (the writer is still ours): sweeps temporary
    /// files, files without rows and rows without files. With the rows in a
    /// shared database (PostgreSQL) and the bytes on this node's disk, a row
    /// without a file here may be another node's file: it is kept and named.
    static func sweep(objects: any ObjectStore, writer: any WriterConnection & FilesWriting, sharedRows: Bool, logger: Logger) throws {
        let outcome = try objects.sweep(rows: try writer.allFileIDs())
        if sharedRows && objects is LocalObjectStore {
            if !outcome.rowsWithoutFiles.isEmpty {
                logger.warning("file rows whose files are not on this node kept (files_store: local with a shared database; use files_store: s3 for many nodes)",
                               metadata: ["count": "\(outcome.rowsWithoutFiles.count)", "ids": "\(outcome.rowsWithoutFiles.prefix(20))"])
            }
        } else if !outcome.rowsWithoutFiles.isEmpty {
            logger.warning("file rows without files removed", metadata: ["ids": "\(outcome.rowsWithoutFiles.prefix(20))"])
            try writer.transaction { try writer.removeFileRows(outcome.rowsWithoutFiles) }
        }
    }

    /// The file area on `objects`, not started yet (`start`).
    init(config: RoostConfig, objects: any ObjectStore, jobs: CallerJobs, logger: Logger) {
        let scheduler = ThumbnailScheduler(config: config, store: objects, pools: jobs.pools, logger: logger)
        self.init(jobs: jobs, config: config, thumbnails: scheduler, objects: objects, logger: logger)
    }

    /// Starts libvips, the upload and thumbnail pools, and the thumbnail job
    /// scan that resumes jobs a crash cut short.
    func start() throws {
        try thumbnails.start()
        try uploads.start()
        thumbnails.rescan()
    }

    /// Stops taking uploads; queued ones are dropped, running ones finish (before the writer stops).
    func shutdown() {
        // The loops have stopped: queued uploads were never acknowledged.
        uploads.shutdown(discardingQueued: true)
        thumbnails.shutdown()
    }
}
