import CEvent
import CEventShim
import Foundation
import HTTP
import Synchronization
import Timing

/// A response sent in pieces, such as a Server-Sent Events stream: started
/// once on its loop, then written chunk by chunk (evhttp's chunked replies)
/// until the server ends it or the client goes away.
///
/// Loop-confined: every method runs on the stream's loop (post work there
/// with `loop.execute`), except the byte accounting (`promise`, `backlog`,
/// `stalledMilliseconds`, `signalBelow`), which any thread may use. The
/// stream registers for the connection's close (`HTTPServer.onClose`), so a
/// client that disconnects is noticed at once and `onClose` runs once.
///
/// Byte accounting: what a producer on another thread has promised to write
/// (`promise`, before it posts the write to the loop) plus what waits in
/// the connection's output buffer (kept current by a callback on that
/// buffer, so it falls as the client reads) is `backlog`: everything this
/// stream holds in memory for its client, Swift side and libevent side.
public final class ResponseStream: @unchecked Sendable {
    public let loop: EventLoop
    let server: HTTPServer
    public let requestID: String
    let request: OpaquePointer
    /// A plain socket (not TLS): a chunk may go straight into it.
    let direct: Bool
    let connection: OpaquePointer
    private var onClose: (() -> Void)?
    /// Runs on the loop when the output buffer falls to the threshold set by `signalBelow`.
    private var onDrain: (() -> Void)?
    /// The output buffer callback (removed when the stream ends).
    private var watch: (buffer: OpaquePointer, entry: OpaquePointer)?
    /// False once the client went away or the server ended the stream.
    public private(set) var isOpen = true

    /// Bytes promised by a producer and not yet added to the output buffer.
    private let promised = Atomic<Int>(0)
    /// Bytes in the connection's output buffer (unsent), as of its last change.
    private let unsent = Atomic<Int>(0)
    /// When the client last made progress (milliseconds, monotonic): the
    /// output buffer drained, or was empty and got bytes.
    private let progressAt = Atomic<Int64>(ResponseStream.nowMilliseconds())
    /// 0, or 1 + the unsent size at or below which `onDrain` runs (once).
    private let drainThreshold = Atomic<Int>(0)

    init(loop: EventLoop, server: HTTPServer, request: OpaquePointer, requestID: String, direct: Bool) {
        self.loop = loop
        self.server = server
        self.request = request
        self.requestID = requestID
        self.direct = direct
        connection = evhttp_request_get_connection(request)
    }

    /// Sets what runs (once, on the loop) when the stream closes for any reason.
    public func setOnClose(_ handler: @escaping () -> Void) { onClose = handler }

    /// Sets what runs on the loop when a `signalBelow` threshold is reached.
    public func setOnDrain(_ handler: @escaping () -> Void) { onDrain = handler }

    // MARK: - Byte accounting (any thread)

    /// Counts `count` bytes a producer is about to post to the loop for `write`.
    public func promise(_ count: Int) { promised.add(count, ordering: .relaxed) }

    /// Bytes this stream holds for its client: promised and not yet written,
    /// plus unsent in the connection's output buffer.
    public var backlog: Int { promised.load(ordering: .relaxed) + unsent.load(ordering: .relaxed) }

    /// How long the client has held unsent bytes without taking any (0 when nothing is unsent).
    public var stalledMilliseconds: Int64 {
        unsent.load(ordering: .relaxed) == 0 ? 0 : max(0, Self.nowMilliseconds() - progressAt.load(ordering: .relaxed))
    }

    /// Asks for `onDrain` (once) when the unsent bytes fall to `threshold` or below.
    public func signalBelow(_ threshold: Int) { drainThreshold.store(max(threshold, 0) + 1, ordering: .relaxed) }

    // MARK: - Writing (on the loop)

    /// Queues `bytes` for the client as one chunk.
    /// - Returns: false when the stream is closed.
    @discardableResult
    public func write(_ bytes: [UInt8]) -> Bool { send(SharedBytes(bytes), promised: 0) }

    /// Sends `chunk` to the client as one chunk: on a plain socket whose
    /// output buffer is empty, straight into the socket (one `writev`, no
    /// trip round the loop); otherwise, or what the socket does not take,
    /// into the connection's output buffer, by reference (the buffer holds
    /// the object until it is sent, so every stream of a round can share one
    /// chunk). `promised` is what the producer counted with `promise` for it.
    /// - Returns: false when the stream is closed.
    @discardableResult
    public func send(_ chunk: SharedBytes, promised count: Int) -> Bool {
        if count != 0 { promised.subtract(count, ordering: .relaxed) }
        guard isOpen else { return false }
        let held = Unmanaged.passRetained(chunk).toOpaque()
        return roost_stream_send(request, chunk.base, chunk.count, direct ? 1 : 0, { _, _, held in
            if let held { Unmanaged<SharedBytes>.fromOpaque(held).release() }
        }, held) >= 0
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

    /// Called by libevent whenever the output buffer changes (on the loop).
    fileprivate func outputChanged(length: Int, added: Int, drained: Int) {
        let before = unsent.exchange(length, ordering: .relaxed)
        if drained > 0 || (before == 0 && added > 0) { progressAt.store(Self.nowMilliseconds(), ordering: .relaxed) }
        let armed = drainThreshold.load(ordering: .relaxed)
        if armed > 0, length < armed, drainThreshold.compareExchange(expected: armed, desired: 0, ordering: .relaxed).exchanged {
            onDrain?()
        }
    }

    private func detach() {
        isOpen = false
        if let watch {
            evbuffer_remove_cb_entry(watch.buffer, watch.entry)
            self.watch = nil
        }
        unsent.store(0, ordering: .relaxed)
        server.onClose(of: connection, loop: loop, nil)
        let handler = onClose
        onClose = nil
        onDrain = nil
        handler?()
    }

    /// Starts the chunked reply and registers for the connection's close.
    func start(status: Int, headers: Headers, timeoutSeconds: Int32) {
        let out = evhttp_request_get_output_headers(request)
        for h in headers { evhttp_add_header(out, h.name, h.value) }
        evhttp_add_header(out, "X-Request-Id", requestID)
        evhttp_connection_set_timeout(connection, timeoutSeconds)
        // The registration keeps the stream alive until it closes, so the
        // output buffer's callback (removed in `detach`) may hold it unretained.
        server.onClose(of: connection, loop: loop) { self.closedByPeer() }
        let context = Unmanaged.passUnretained(self).toOpaque()
        if let bev = evhttp_connection_get_bufferevent(connection), let output = bufferevent_get_output(bev),
           let entry = evbuffer_add_cb(output, { buffer, info, context in
               guard let context, let info else { return }
               let length = Int(info.pointee.orig_size) + Int(info.pointee.n_added) - Int(info.pointee.n_deleted)
               Unmanaged<ResponseStream>.fromOpaque(context).takeUnretainedValue()
                   .outputChanged(length: length, added: Int(info.pointee.n_added), drained: Int(info.pointee.n_deleted))
           }, context) {
            watch = (output, entry)
        }
        evhttp_send_reply_start(request, Int32(status), Response.reason(status))
    }

    static func nowMilliseconds() -> Int64 { Int64(monotonicNanoseconds() / 1_000_000) }
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
        let (loop, server, handle, requestID, trace, plain) = (c.loop, c.server, c.handle, self.requestID, c.trace, c.hsts == nil)
        let begin: @Sendable () -> Void = {
            let stream = ResponseStream(loop: loop, server: server, request: handle.pointer, requestID: requestID, direct: plain)
            stream.start(status: status, headers: headers, timeoutSeconds: timeoutSeconds)
            server.streamStarted(status: status, requestID: requestID, loop: loop, trace: trace)
            ready(stream)
        }
        if loop.inLoop { begin() } else { loop.execute(begin) }
    }
}
