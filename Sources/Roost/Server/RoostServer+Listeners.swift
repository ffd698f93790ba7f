import EventLoop
import Foundation
import Logging

extension RoostServer {
    /// One listen address's sockets, whether it speaks TLS, and whether its
    /// connections start with a PROXY protocol header.
    struct BoundListener {
        let sockets: [ListeningSocket]
        let tls: Bool
        var proxyProtocol = false

        /// The sockets of the listeners of one kind, as `HTTPServer` takes them.
        static func groups(_ all: [BoundListener], tls: Bool, proxyProtocol: Bool) -> [[ListeningSocket]] {
            all.filter { $0.tls == tls && $0.proxyProtocol == proxyProtocol }.map(\.sockets)
        }
    }

    /// A PROXY protocol listener serves only trusted proxies, so it needs
    /// some; it is plain HTTP (the proxy terminates TLS, or passes it to an
    /// https:// listener without the header).
    static func checkProxyProtocol(_ config: RoostConfig) throws {
        let proxied = config.listeners.filter(\.proxyProtocol)
        if proxied.contains(where: \.tls) {
            throw RoostConfig.Invalid("proxy_protocol is for plain listen addresses; an https:// listener cannot take it yet")
        }
        if !proxied.isEmpty, config.trustedProxies.isEmpty {
            throw RoostConfig.Invalid("a proxy_protocol listen address needs trusted_proxies (the proxies that may connect to it)")
        }
    }

    /// The TLS context of the HTTPS listeners; nil when none is configured.
    /// A TLS listener without a certificate and key is a start-up error.
    static func tlsContext(_ config: RoostConfig, logger: Logger) throws -> TLSContext? {
        let wanted = config.listeners.contains(where: \.tls)
        guard config.tls.isConfigured, let certificate = config.tls.certificate, let key = config.tls.key else {
            if wanted { throw RoostConfig.Invalid("an https:// (tls: true) listen address needs tls.certificate and tls.key") }
            if config.tls.certificate != nil || config.tls.key != nil {
                throw RoostConfig.Invalid("tls needs both certificate and key")
            }
            return nil
        }
        let context: TLSContext
        do { context = try TLSContext(certificate: certificate, key: key, hsts: config.tls.hsts) } catch {
            throw RoostConfig.Invalid("TLS: \(error)")
        }
        logger.info("TLS certificate loaded", metadata: ["certificate": "\(context.summary)"])
        if !wanted { logger.warning("tls is configured but no listen address uses it (https://host:port or tls: true)") }
        return context
    }

    /// Binds every `listen` address, or under socket activation takes the
    /// inherited sockets; an inherited socket is TLS (or PROXY) when a TLS
    /// (or proxy_protocol) listen entry has its port.
    func bindListeners(tls: Bool) throws -> [BoundListener] {
        guard services.inheritedSockets.isEmpty else {
            let tlsPorts = Set(try config.listeners.filter(\.tls).map { try ListeningSocket.parse($0.address).port })
            let proxyPorts = Set(try config.listeners.filter(\.proxyProtocol).map { try ListeningSocket.parse($0.address).port })
            return services.inheritedSockets.map { fd in
                let socket = ListeningSocket.inherited(fd: fd)
                return BoundListener(sockets: [socket], tls: tls && tlsPorts.contains(socket.port),
                                     proxyProtocol: proxyPorts.contains(socket.port))
            }
        }
        var bound: [BoundListener] = []
        do {
            for listener in config.listeners {
                bound.append(BoundListener(sockets: try ListeningSocket.bindGroup(listener.address, count: config.loops), tls: listener.tls,
                                           proxyProtocol: listener.proxyProtocol))
            }
        } catch {
            for b in bound { for s in b.sockets { close(s.fd) } }
            throw error
        }
        return bound
    }
}
