import CEvent
import CEventTLS
import HTTP
import Logging

/// Every connection passes a gate (`roost_gate.c`) on its socket's input,
/// under evhttp: strict request heads (anything else is answered 400 and the
/// connection closed), a time limit on each request head, a limit on open
/// connections per socket peer address, and on PROXY protocol listeners the
/// PROXY header (v1 and v2, as HAProxy and nginx send it).
///
/// A PROXY listener serves only `trustedProxies`: the gate asks `trusted`
/// about the socket's peer at its first bytes and closes the connection of
/// any other peer, and of one whose header is malformed or too long,
/// unserved; the header must be whole within the head time limit. A good
/// header's client is kept per connection (keyed by the evhttp connection)
/// until it closes, and stands in for the TCP peer in
/// `TrustedProxies.clientAddress`, so throttles, the access log, the
/// journal's `REMOTE_ADDR` and metrics all see it.
extension HTTPServer {
    /// The hooks of `state`'s gates, with `state` as their argument.
    static func gateHooks(for state: LoopState) -> UnsafeMutablePointer<roost_gate_hooks> {
        let hooks = UnsafeMutablePointer<roost_gate_hooks>.allocate(capacity: 1)
        hooks.initialize(to: roost_gate_hooks(
            trusted: { peer, arg in
                guard let peer, let arg else { return 0 }
                let state = Unmanaged<LoopState>.fromOpaque(arg).takeUnretainedValue()
                return state.server.mayProxy(peer: String(cString: peer)) ? 1 : 0
            },
            exempt: { peer, arg in
                guard let peer, let arg else { return 0 }
                let state = Unmanaged<LoopState>.fromOpaque(arg).takeUnretainedValue()
                guard let address = IPAddress(String(cString: peer)) else { return 0 }
                return state.server.trustedProxies.contains(address) ? 1 : 0
            },
            found: { connection, client, arg in
                guard let connection, let client, let arg else { return }
                Unmanaged<LoopState>.fromOpaque(arg).takeUnretainedValue().proxiedClients[connection] = String(cString: client)
            },
            closed: { connection, arg in
                guard let connection, let arg else { return }
                Unmanaged<LoopState>.fromOpaque(arg).takeUnretainedValue().connectionClosed(connection)
            },
            arg: Unmanaged.passUnretained(state).toOpaque(), idle_seconds: idleSeconds,
            header_seconds: state.server.headerSeconds, max_per_address: state.server.maxConnectionsPerAddress))
        return hooks
    }

    /// Whether `peer` may send a PROXY header; any other peer's connection is closed.
    func mayProxy(peer: String) -> Bool {
        if let address = IPAddress(peer), trustedProxies.contains(address) { return true }
        logger.info("PROXY protocol connection from an untrusted peer closed", metadata: ["peer": "\(peer)"])
        return false
    }

    /// Answers a head the gate refused (it reaches evhttp as `OPTIONS *` with
    /// `X-Roost-Refused: <status> <reason>` and `Connection: close`).
    static func refusal(_ headers: Headers) -> Response {
        let text = headers["X-Roost-Refused"] ?? "400 malformed request"
        let status = Int(text.prefix(3)) ?? 400
        let reason = text.dropFirst(4)
        // The gate refuses with 400 or 431 only (`roost_gate.c`).
        var response = HTTPError(status == 431 ? .requestHeaderFieldsTooLarge : .badRequest, "The request was refused: \(reason).").response
        response.headers.add("Connection", "close")
        return response
    }

    /// The client of `req`: from the TCP peer and its forwarding header, or
    /// on a PROXY front from the client the PROXY header named (and that
    /// client's forwarding header, should it be a trusted proxy itself). A
    /// PROXY header that named nobody (LOCAL, UNKNOWN) leaves the peer, whose
    /// forwarding header is not read: whoever reached the proxy wrote it.
    func clientAddress(of req: OpaquePointer, front: Front, headers: Headers) -> String {
        let connection = evhttp_request_get_connection(req)
        if front.proxied {
            guard let connection, let client = front.state.proxiedClients[UnsafeRawPointer(connection)] else {
                return Self.peer(of: connection)
            }
            return trustedProxies.clientAddress(peer: client, headers: headers)
        }
        return trustedProxies.clientAddress(peer: Self.peer(of: connection), headers: headers)
    }

    /// The TCP peer of an evhttp connection.
    static func peer(of connection: OpaquePointer?) -> String {
        var peer: UnsafeMutablePointer<CChar>?
        var port: UInt16 = 0
        evhttp_connection_get_peer(connection, &peer, &port)
        return peer.map { String(cString: $0) } ?? ""
    }

    /// Runs `handler` (on `loop`) when `connection` closes; nil forgets it.
    func onClose(of connection: OpaquePointer, loop: EventLoop, _ handler: (() -> Void)?) {
        states[loop.index].closeHandlers[UnsafeRawPointer(connection)] = handler
    }
}
