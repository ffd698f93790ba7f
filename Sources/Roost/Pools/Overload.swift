import EventLoop
import HTTP
import Jobs

/// The one overload policy: what a request hears when the queue it needs is
/// full (or, for hashes, its wait would be too long): 503 `Overloaded` with a
/// `Retry-After` fitting how fast that queue drains.
enum Overload {
    case reads, slowReads, writes, hashes, uploads, thumbnails
    /// Every live stream slot is taken (`live_max_streams`).
    case liveStreams

    /// Seconds to wait before retrying: hashes and long scans drain slowly.
    var retryAfter: Int {
        switch self {
        case .hashes, .slowReads: return 2
        case .liveStreams: return 5
        case .reads, .writes, .uploads, .thumbnails: return 1
        }
    }

    var error: HTTPError {
        switch self {
        case .slowReads:
            return HTTPError(.overloaded, "Too many long-running queries are waiting; try again shortly, or narrow the query or index the fields it sorts and filters on.",
                             headers: Headers([("Retry-After", "\(retryAfter)")]))
        case .liveStreams:
            return HTTPError(.overloaded, "Too many live streams are open; try again shortly.", headers: Headers([("Retry-After", "\(retryAfter)")]))
        default:
            return .overloaded(retryAfter: retryAfter)
        }
    }
}

extension WorkerPool {
    /// Queues `job`; when the queue is full, `out` hears `overload`'s 503.
    /// - Returns: whether the job was queued.
    @discardableResult
    func submit(_ job: Job, lane: Int = 0, orAnswer out: ResponseWriter, _ overload: Overload) -> Bool {
        guard submit(job, lane: lane) else {
            out.send(overload.error.response)
            return false
        }
        return true
    }
}
