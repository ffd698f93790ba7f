import CEvent
import CEventTLS
import Foundation
import HTTP
import Logging
import Timing

/// evhttp on every loop. Each address is a group of listening sockets: one
/// per loop (SO_REUSEPORT, so the kernel spreads connections), or a single
/// inherited socket that every loop accepts from.
///
/// TLS groups get a second evhttp per loop whose connections are OpenSSL
/// bufferevents (evhttp chooses the bufferevent per evhttp, not per socket);
/// both hand requests to the same handler, and TLS responses carry HSTS.
/// Groups that speak the PROXY protocol get an evhttp of their own too.
/// Every connection passes a gate before evhttp (`HTTPServer+Gate.swift`).
///
/// The handler runs on the loop thread that parsed the request. It must not
/// block: it either answers at once or queues the work and answers later
/// through the `ResponseWriter`.
public final class HTTPServer: @unchecked Sendable {
    public typealias Handler = @Sendable (Request, ResponseWriter) -> Void
    /// Called on the loop after each response is written (access log, metrics).
    public typealias Observer = @Sendable (CompletedRequest) -> Void

    private let handler: Handler
    private let observer: Observer?
    let logger: Logger
    var states: [LoopState] = []
    private let idPrefix: String
    /// evhttp's idle limit per connection.
    static let idleSeconds: Int32 = 60
    /// Seconds a request head may take from its first byte.
    let headerSeconds: Int32
    /// Open connections per socket peer address (trusted proxies exempt); 0: no limit.
    let maxConnectionsPerAddress: Int32
    let trustedProxies: TrustedProxies

    /// Per-loop state, touched only on that loop's thread.
    final class LoopState: @unchecked Sendable {
        let loop: EventLoop
        var fronts: [Front] = []
        var inFlight = 0
        var nextID: UInt64 = 0
        /// The client each PROXY connection's header named, by connection key.
        var proxiedClients: [UnsafeRawPointer: String] = [:]
        /// What a connection's owner runs when it closes (a streamed response), by connection key.
        var closeHandlers: [UnsafeRawPointer: () -> Void] = [:]
        /// What this loop's gates call back (made on first use; never freed, like the evhttps).
        lazy var gateHooks = HTTPServer.gateHooks(for: self)
        unowned let server: HTTPServer
        init(loop: EventLoop, server: HTTPServer) {
            self.loop = loop
            self.server = server
        }

        func connectionClosed(_ connection: UnsafeRawPointer) {
            proxiedClients[connection] = nil
            closeHandlers.removeValue(forKey: connection)?()
        }
    }

    /// One evhttp of a loop (plain or TLS) and the sockets it accepts from.
    final class Front: @unchecked Sendable {
        let http: OpaquePointer
        /// The HSTS value for its responses: set only on a TLS front.
        let hsts: String?
        /// Whether its connections start with a PROXY header.
        let proxied: Bool
        var bound: [OpaquePointer] = []
        unowned let state: LoopState
        init(http: OpaquePointer, tls: TLSContext?, proxied: Bool, state: LoopState) {
            self.http = http
            hsts = tls?.hsts
            self.proxied = proxied
            self.state = state
        }
    }

    /// - Parameters:
    ///   - maxBodyBytes: evhttp's hard cap; larger bodies are refused before they are read.
    ///   - tlsSockets: groups that speak HTTPS with `tls`.
    ///   - proxySockets: plain groups whose connections start with a PROXY
    ///     protocol header, served only to `trustedProxies`.
    ///   - trustedProxies: peers whose forwarding header names the client (`Request.remoteAddress`).
    ///   - headerSeconds: how long a request head may take from its first byte.
    ///   - maxConnectionsPerAddress: open connections one socket peer may hold
    ///     (trusted proxies exempt); 0 for no limit.
    ///   - observer: sees every finished request, on its loop; keep it cheap.
    public init(loops: [EventLoop], sockets: [[ListeningSocket]], tlsSockets: [[ListeningSocket]] = [], tls: TLSContext? = nil,
                proxySockets: [[ListeningSocket]] = [],
                maxBodyBytes: Int, logger: Logger, trustedProxies: TrustedProxies = .none,
                headerSeconds: Int = 10, maxConnectionsPerAddress: Int = 256,
                observer: Observer? = nil, handler: @escaping Handler) {
        self.handler = handler
        self.headerSeconds = Int32(clamping: max(1, headerSeconds))
        self.maxConnectionsPerAddress = Int32(clamping: max(0, maxConnectionsPerAddress))
        self.trustedProxies = trustedProxies
        self.observer = observer
        self.logger = logger
        idPrefix = String(UInt32.random(in: 0...UInt32.max), radix: 16)
        for loop in loops {
            let state = LoopState(loop: loop, server: self)
            states.append(state)
            state.fronts.append(Self.front(state, groups: sockets, tls: nil, proxied: false, maxBodyBytes: maxBodyBytes))
            if let tls, !tlsSockets.isEmpty {
                state.fronts.append(Self.front(state, groups: tlsSockets, tls: tls, proxied: false, maxBodyBytes: maxBodyBytes))
            }
            if !proxySockets.isEmpty {
                state.fronts.append(Self.front(state, groups: proxySockets, tls: nil, proxied: true, maxBodyBytes: maxBodyBytes))
            }
        }
    }

    /// An evhttp on `state`'s loop accepting from its socket of each group.
    private static func front(_ state: LoopState, groups: [[ListeningSocket]], tls: TLSContext?, proxied: Bool,
                              maxBodyBytes: Int) -> Front {
        guard let http = evhttp_new(state.loop.base) else { fatalError("evhttp_new failed") }
        let methods = EVHTTP_REQ_GET.rawValue | EVHTTP_REQ_POST.rawValue | EVHTTP_REQ_HEAD.rawValue | EVHTTP_REQ_PUT.rawValue
            | EVHTTP_REQ_DELETE.rawValue | EVHTTP_REQ_OPTIONS.rawValue | EVHTTP_REQ_PATCH.rawValue
            | EVHTTP_REQ_TRACE.rawValue | EVHTTP_REQ_CONNECT.rawValue  // the router answers them with a JSON 405
        evhttp_set_allowed_methods(http, UInt16(methods))
        evhttp_set_max_body_size(http, Int(maxBodyBytes))
        evhttp_set_max_headers_size(http, 64 * 1024)
        evhttp_set_timeout(http, idleSeconds)
        evhttp_set_default_content_type(http, "application/json; charset=utf-8")
        let kind = proxied ? ROOST_GATE_PROXY : tls == nil ? ROOST_GATE_PLAIN : ROOST_GATE_TLS
        roost_http_use_gate(http, state.gateHooks, Int32(kind), tls?.handle)
        let front = Front(http: http, tls: tls, proxied: proxied, state: state)
        evhttp_set_gencb(http, { req, ctx in
            guard let req, let ctx else { return }
            let front = Unmanaged<Front>.fromOpaque(ctx).takeUnretainedValue()
            front.state.server.dispatch(req, front)
        }, Unmanaged.passUnretained(front).toOpaque())
        for group in groups where !group.isEmpty {
            // Each loop takes its own socket of the group (or a copy of the
            // only one), so each listener closes its descriptor independently.
            let copy = dup(group[state.loop.index % group.count].fd)
            if let b = evhttp_accept_socket_with_handle(http, copy) { front.bound.append(b) }
        }
        return front
    }

    /// Turns an evhttp request into a `Request` and calls the handler.
    private func dispatch(_ req: OpaquePointer, _ front: Front) {
        let state = front.state
        state.inFlight += 1
        let started = observer == nil ? 0 : monotonicNanoseconds()
        let method: Request.Method
        switch evhttp_request_get_command(req) {
        case EVHTTP_REQ_GET: method = .get
        case EVHTTP_REQ_HEAD: method = .head
        case EVHTTP_REQ_POST: method = .post
        case EVHTTP_REQ_PUT: method = .put
        case EVHTTP_REQ_PATCH: method = .patch
        case EVHTTP_REQ_DELETE: method = .delete
        case EVHTTP_REQ_OPTIONS: method = .options
        default: method = .other
        }
        let uri = evhttp_request_get_evhttp_uri(req)
        let path = evhttp_uri_get_path(uri).map { String(cString: $0) } ?? "/"
        let query = Self.parseQuery(evhttp_uri_get_query(uri))
        let headers = Self.headers(evhttp_request_get_input_headers(req))
        if Self.closesAfterReply(evhttp_request_get_command(req), headers) {
            evhttp_add_header(evhttp_request_get_output_headers(req), "Connection", "close")
        }
        let body = Self.body(evhttp_request_get_input_buffer(req))
        let requestID: String
        if let given = headers["X-Request-Id"], !given.isEmpty, given.utf8.count <= 128,
           given.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) {
            requestID = given
        } else {
            state.nextID &+= 1
            requestID = "\(idPrefix)-\(state.loop.index)-\(String(state.nextID, radix: 16))"
        }
        let request = Request(method: method, path: path, segments: Self.segments(path), query: query,
                              headers: headers, body: body, requestID: requestID,
                              remoteAddress: clientAddress(of: req, front: front, headers: headers))
        let trace = observer == nil ? nil : RequestTrace(request: request, started: started)
        let writer = ResponseWriter(.init(loop: state.loop, server: self, handle: RequestHandle(pointer: req), trace: trace,
                                          hsts: front.hsts), requestID: requestID)
        // Only the gate makes a `*` target: it refuses every one a client sends.
        if evhttp_request_get_uri(req)?.pointee == 0x2A {
            return writer.send(Self.refusal(headers))
        }
        handler(request, writer)
    }

    /// Writes the response; on the request's loop only.
    func reply(_ handle: RequestHandle, _ response: Response, requestID: String, loop: EventLoop, trace: RequestTrace?, hsts: String?) {
        let req = handle.pointer
        let out = evhttp_request_get_output_headers(req)
        for h in response.headers { evhttp_add_header(out, h.name, h.value) }
        evhttp_add_header(out, "X-Request-Id", requestID)
        if let hsts { evhttp_add_header(out, "Strict-Transport-Security", hsts) }
        let buffer = evbuffer_new()
        response.body.withUnsafeBytes { bytes in
            if let base = bytes.baseAddress, bytes.count > 0 { evbuffer_add(buffer, base, bytes.count) }
        }
        if let file = response.file {
            // libevent owns the descriptor from here and closes it after sending.
            let fd = file.take()
            // Without this flag libevent would map or read the file into memory on the loop.
            evbuffer_set_flags(buffer, UInt64(EVBUFFER_FLAG_DRAINS_TO_FD))
            if evbuffer_add_file(buffer, fd, Int64(file.offset), Int64(file.length)) != 0 { close(fd) }
        }
        evhttp_send_reply(req, Int32(response.status), Response.reason(response.status), buffer)
        evbuffer_free(buffer)
        states[loop.index].inFlight -= 1
        if let observer, let trace {
            observer(CompletedRequest(method: trace.method, path: trace.path, route: trace.route, status: response.status,
                                      durationNanoseconds: monotonicNanoseconds() &- trace.started,
                                      requestID: requestID, remoteAddress: trace.remoteAddress, loopIndex: loop.index))
        }
    }

    /// A streamed reply has begun: the request no longer counts as in flight
    /// and is logged now, with the status it started with. Loop thread only.
    func streamStarted(status: Int, requestID: String, loop: EventLoop, trace: RequestTrace?) {
        states[loop.index].inFlight -= 1
        if let observer, let trace {
            observer(CompletedRequest(method: trace.method, path: trace.path, route: trace.route, status: status,
                                      durationNanoseconds: monotonicNanoseconds() &- trace.started,
                                      requestID: requestID, remoteAddress: trace.remoteAddress, loopIndex: loop.index))
        }
    }

    /// Stops accepting new connections on every loop. Any thread.
    public func stopAccepting() {
        for state in states {
            state.loop.execute {
                for front in state.fronts {
                    for b in front.bound { evhttp_del_accept_socket(front.http, b) }
                    front.bound.removeAll()
                }
            }
        }
    }

    /// Requests still waiting for their response on `loop`. Loop thread only.
    public func inFlight(on loop: EventLoop) -> Int { states[loop.index].inFlight }
}

/// A request's facts kept from dispatch to reply for the observer: one small
/// allocation per request, only when an observer is set.
final class RequestTrace: @unchecked Sendable {
    let method: Request.Method
    let path: String
    let remoteAddress: String
    let started: UInt64
    /// The matched route's template, set by the router; read and written on the request's loop only.
    var route: String?

    init(request: Request, started: UInt64) {
        method = request.method
        path = request.path
        remoteAddress = request.remoteAddress
        self.started = started
    }
}

/// One finished request, as the observer (access log, metrics) sees it.
public struct CompletedRequest: Sendable {
    public let method: Request.Method
    /// The raw path as the client sent it.
    public let path: String
    /// The template of the route that owned the path (the metrics label), or nil when none did.
    public let route: String?
    public let status: Int
    /// From the parsed request to the response handed to evhttp.
    public let durationNanoseconds: UInt64
    public let requestID: String
    public let remoteAddress: String
    public let loopIndex: Int
}
