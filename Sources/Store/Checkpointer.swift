import Foundation
import Logging

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

    /// WAL size above which the checkpoint waits for writers and truncates.
    public var walLimit: Int64 = 64 << 20

    func walBytes() -> Int64 {
        var st = stat()
        return stat(path + "-wal", &st) == 0 ? Int64(st.st_size) : 0
    }

    public init(path: String, interval: TimeInterval = 0.5, logger: Logger) {
        self.path = path
        self.interval = interval
        self.logger = logger
    }

    public func start() {
        let thread = Thread { [self] in
            defer { finished.signal() }
            // Opened here: a connection belongs to the thread that uses it.
            let connection: SQLiteConnection
            do { connection = try SQLiteConnection(path: path) } catch {
                logger.error("checkpointer cannot open the database; SQLite will grow the WAL", metadata: ["error": "\(error)"])
                return
            }
            while true {
                condition.lock()
                if !stopped { _ = condition.wait(until: Date().addingTimeInterval(interval)) }
                let done = stopped
                condition.unlock()
                if done { return }
                do {
                    // PASSIVE never waits for the writer, but under a steady write
                    // load it never catches up, so the WAL would never restart.
                    // Past the limit, TRUNCATE makes writers wait a moment while
                    // it finishes and shrinks the file.
                    let mode = walBytes() > walLimit ? "TRUNCATE" : "PASSIVE"
                    try connection.exec("PRAGMA wal_checkpoint(\(mode))")
                } catch {
                    logger.warning("background checkpoint failed", metadata: ["error": "\(error)"])
                }
            }
        }
        thread.name = "checkpointer"
        thread.start()
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
