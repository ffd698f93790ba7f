import Foundation
import Jobs
import Logging
import Store

/// Moves WAL checkpoints off the writer thread.
///
/// The writer's connection turns SQLite's automatic checkpoint off; this
/// thread, on its own connection, runs a PASSIVE checkpoint (which never
/// blocks the writer or readers) whenever the WAL has grown, so commits do
/// not stall behind page copies and the file sync that a checkpoint does.
public final class Checkpointer: @unchecked Sendable {
    private let path: String
    private let logger: Logger
    private let interval: TimeInterval
    private let condition = NSCondition()
    private var stopped = false
    private let finished = DispatchSemaphore(value: 0)

    /// The default `walLimit`; the writer also cuts the WAL file back to it.
    public static let defaultWALLimit: Int64 = 64 << 20

    /// WAL content (frames written since the WAL last restarted) above which
    /// the checkpoint waits for writers and restarts the WAL.
    public var walLimit: Int64 = Checkpointer.defaultWALLimit

    /// Asked before each RESTART: false (a backup is reading one long
    /// snapshot) keeps to PASSIVE, since RESTART would hold the writer back
    /// while it waits for that reader.
    public var mayRestart: @Sendable () -> Bool = { true }

    public init(path: String, interval: TimeInterval = 0.5, logger: Logger) {
        self.path = path
        self.interval = interval
        self.logger = logger
    }

    public func start() {
        NamedThread.start("checkpointer") { [self] in
            defer { finished.signal() }
            // Opened here: a connection belongs to the thread that uses it.
            let connection: SQLiteConnection
            do { connection = try SQLiteConnection(path: path) } catch {
                logger.error("checkpointer cannot open the database; SQLite will grow the WAL", metadata: ["error": "\(error)"])
                return
            }
            // A WAL frame is one page plus its 24-byte header.
            let frameBytes = ((try? connection.prepare("PRAGMA page_size").firstRow { $0.int(0) }) ?? 4096) + 24
            while true {
                condition.lock()
                if !stopped { _ = condition.wait(until: Date().addingTimeInterval(interval)) }
                let done = stopped
                condition.unlock()
                if done { return }
                do {
                    // PASSIVE never waits for the writer, but under a steady write
                    // load it never catches up, so the WAL would never restart.
                    // Past the limit, RESTART makes writers wait while it copies
                    // the last frames, so that the next commit writes from the
                    // WAL's start. A PASSIVE pass just before leaves it little to
                    // copy and sync, and the writers' wait stays short. (RESTART
                    // keeps the file's blocks for reuse; TRUNCATE would free them
                    // and have every later commit allocate them again.)
                    let frames = try connection.prepare("PRAGMA wal_checkpoint(PASSIVE)").firstRow { $0.int(1) } ?? 0
                    if frames * frameBytes > walLimit && mayRestart() { try connection.exec("PRAGMA wal_checkpoint(RESTART)") }
                } catch {
                    logger.warning("background checkpoint failed", metadata: ["error": "\(error)"])
                }
            }
        }
    }

    /// Stops the thread; the final TRUNCATE checkpoint is the writer's.
    public func stop() {
        condition.lock()
        stopped = true
        condition.broadcast()
        condition.unlock()
        finished.wait()
    }
}
