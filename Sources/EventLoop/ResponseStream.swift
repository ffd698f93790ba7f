import CEvent
import Foundation
import HTTP

/// A response sent in pieces, such as a Server-Sent Events stream: started
/// once on its loop, then written chunk by chunk (evhttp's chunked replies)
/// until the server ends it or the client goes away.
///
/// Loop-confined: every method runs on the stream's loop (post work there
/// with `loop.execute`). The stream registers for the connection's close
/// (`HTTPServer.onClose`), so a client that disconnects is noticed at once
/// and `onClose` runs once.
public final class ResponseStream: @unchecked Sendable {
    public let loop: EventLoop
    public let requestID: String
    let request: OpaquePointer
    let connection: OpaquePointer
    let server: HTTPServer
    private var onClose: (() -> Void)?
    /// False once the client went away or the server ended the stream.
    public private(set) var isOpen = true

    init(loop: EventLoop, server: HTTPServer, request: OpaquePointer, requestID: String) {
        self.loop = loop
        self.server = server
        self.request = request
        self.requestID = requestID
        connection = evhttp_request_get_connection(request)
    }

    /// Sets what runs (once, on the loop) when the stream closes for any reason.
    public func setOnClose(_ handler: @escaping () -> Void) { onClose = handler }

    /// Queues `bytes` for the client.
    /// - Returns: the bytes still waiting in the connection's output buffer
    ///   after this write (what a slow client has not taken yet), or nil
    ///   when the stream is closed.
    @discardableResult
    public func write(_ bytes: [UInt8]) -> Int? {
        guard isOpen else { return nil }
        let buffer = evbuffer_new()
        bytes.withUnsafeBytes { raw in
            if let base = raw.baseAddress, raw.count > 0 { evbuffer_add(buffer, base, raw.count) }
        }
        evhttp_send_reply_chunk(request, buffer)
        evbuffer_free(buffer)
        return pending
    }

    /// Bytes written but not yet taken by the client.
    public var pending: Int {
        guard isOpen, let bev = evhttp_connection_get_bufferevent(connection), let output = bufferevent_get_output(bev) else { return 0 }
        return Int(evbuffer_get_length(output))
    }

    /// Ends the stream cleanly (the last chunk); the client sees the end.
    public func finish() {
        guard isOpen else { return }
        detach()
        evhttp_send_reply_end(request)
    }

    /// Drops the connection at once, unsent bytes included (a client too slow to keep up).
    public func abort() {
        guard isOpen else { return }
        detach()
        evhttp_connection_free(connection)
    }

    /// Called by libevent when the connection closes.
    fileprivate func closedByPeer() {
        guard isOpen else { return }
        detach()
    }

    private func detach() {
        isOpen = false
        server.onClose(of: connection, loop: loop, nil)
        let handler = onClose
        onClose = nil
        handler?()
    }

    /// Starts the chunked reply and registers for the connection's close.
    func start(status: Int, headers: Headers, timeoutSeconds: Int32) {
        let out = evhttp_request_get_output_headers(request)
        for h in headers { evhttp_add_header(out, h.name, h.value) }
        evhttp_add_header(out, "X-Request-Id", requestID)
        evhttp_connection_set_timeout(connection, timeoutSeconds)
        // The registration keeps the stream alive until it closes.
        server.onClose(of: connection, loop: loop) { self.closedByPeer() }
        evhttp_send_reply_start(request, Int32(status), Response.reason(status))
    }
}

extension ResponseWriter {
    /// Answers with a stream instead of a whole response: `ready` runs on
    /// the loop with the started stream. Call instead of `send`, once.
    /// - Parameter timeoutSeconds: the connection's idle limit; write more often (heartbeats).
    public func stream(status: Int = 200, headers: Headers, timeoutSeconds: Int32 = 120,
                       ready: @escaping @Sendable (ResponseStream) -> Void) {
        guard case .connection(let c) = target else {
            // A captured reply (in-process tests) records the stream's head only.
            return send(Response(status: status, headers: headers))
        }
        let (loop, server, handle, requestID, trace) = (c.loop, c.server, c.handle, self.requestID, c.trace)
        let begin: @Sendable () -> Void = {
            let stream = ResponseStream(loop: loop, server: server, request: handle.pointer, requestID: requestID)
            stream.start(status: status, headers: headers, timeoutSeconds: timeoutSeconds)
            server.streamStarted(status: status, requestID: requestID, loop: loop, trace: trace)
            ready(stream)
        }
        if loop.inLoop { begin() } else { loop.execute(begin) }
    }
}
