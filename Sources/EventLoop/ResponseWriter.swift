import CEvent
import HTTP

/// Sends the one response to one request, from any thread: the bytes are
/// always written on the request's own loop.
public struct ResponseWriter: Sendable {
    let loop: EventLoop
    let server: HTTPServer
    let handle: RequestHandle
    public let requestID: String

    /// Sends `response`. Call exactly once.
    public func send(_ response: Response) {
        if loop.inLoop {
            server.reply(handle, response, requestID: requestID, loop: loop)
        } else {
            let server = self.server, handle = self.handle, requestID = self.requestID, loop = self.loop
            loop.execute { server.reply(handle, response, requestID: requestID, loop: loop) }
        }
    }
}

/// An `evhttp_request` pointer carried to a worker and back. Workers never
/// dereference it; only the owning loop does.
struct RequestHandle: @unchecked Sendable {
    let pointer: OpaquePointer
}
