import CEvent
import HTTP

/// Sends the one response to one request, from any thread: the bytes are
/// always written on the request's own loop. A writer made with
/// `capturing:` hands the response to a closure instead, so the router and
/// handlers can be tested in-process with no socket.
public struct ResponseWriter: Sendable {
    let target: Target
    public let requestID: String

    /// Where the response goes.
    enum Target: Sendable {
        case connection(Connection)
        case capture(@Sendable (Response) -> Void)
    }

    /// An evhttp request on its loop.
    struct Connection: Sendable {
        let loop: EventLoop
        let server: HTTPServer
        let handle: RequestHandle
        /// What the access log needs at reply time; nil when no observer is set.
        let trace: RequestTrace?
        /// `Strict-Transport-Security` for a request that came over TLS.
        let hsts: String?

        func reply(_ response: Response, requestID: String) {
            server.reply(handle, response, requestID: requestID, loop: loop, trace: trace, hsts: hsts)
        }
    }

    init(_ connection: Connection, requestID: String) {
        target = .connection(connection)
        self.requestID = requestID
    }

    /// A writer that passes the response to `capture` (on the calling thread).
    public init(requestID: String = "test", capturing capture: @escaping @Sendable (Response) -> Void) {
        target = .capture(capture)
        self.requestID = requestID
    }

    /// The request's loop when called on that loop's thread, else nil
    /// (a worker, or a capturing writer): what may run on the loop itself.
    public var currentLoop: EventLoop? {
        if case .connection(let c) = target, c.loop.inLoop { return c.loop }
        return nil
    }

    /// Records the template of the route that owns the request, for the
    /// access log and the metrics label. On the request's loop, before `send`.
    public func routed(_ template: String) {
        if case .connection(let c) = target { c.trace?.route = template }
    }

    /// Sends `response`. Call exactly once.
    public func send(_ response: Response) {
        switch target {
        case .capture(let capture): capture(response)
        case .connection(let c):
            if c.loop.inLoop {
                c.reply(response, requestID: requestID)
            } else {
                let requestID = self.requestID
                c.loop.execute { c.reply(response, requestID: requestID) }
            }
        }
    }
}

/// An `evhttp_request` pointer carried to a worker and back. Workers never
/// dereference it; only the owning loop does.
struct RequestHandle: @unchecked Sendable {
    let pointer: OpaquePointer
}
