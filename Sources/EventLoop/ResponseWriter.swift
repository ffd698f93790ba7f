import CEvent
import HTTP

/// Sends the one response to one request, from any thread: the bytes are
/// always written on the request's own loop.
public struct ResponseWriter: Sendable {
    let loop: EventLoop
    let server: HTTPServer
    let handle: RequestHandle
    public let requestID: String
    /// What the access log needs at reply time; nil when no observer is set.
    let trace: RequestTrace?
    /// `Strict-Transport-Security` for a request that came over TLS.
    let hsts: String?

    /// Sends `response`. Call exactly once.
    public func send(_ response: Response) {
        if loop.inLoop {
            server.reply(handle, response, requestID: requestID, loop: loop, trace: trace, hsts: hsts)
        } else {
            let server = self.server, handle = self.handle, requestID = self.requestID, loop = self.loop, trace = self.trace
            let hsts = self.hsts
            loop.execute { server.reply(handle, response, requestID: requestID, loop: loop, trace: trace, hsts: hsts) }
        }
    }
}

/// An `evhttp_request` pointer carried to a worker and back. Workers never
/// dereference it; only the owning loop does.
struct RequestHandle: @unchecked Sendable {
    let pointer: OpaquePointer
}
