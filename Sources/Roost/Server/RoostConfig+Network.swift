import Foundation
import HTTP

extension RoostConfig {
    /// HTTPS in the daemon: one certificate chain and key (PEM) for every
    /// TLS listener. SIGHUP reads both files again.
    public struct TLS: Sendable, Equatable {
        /// The certificate chain, leaf first (e.g. certbot's `fullchain.pem`).
        public var certificate: String?
        public var key: String?
        /// The `Strict-Transport-Security` value on TLS responses; nil sends none.
        public var hsts: String? = "max-age=31536000"

        public var isConfigured: Bool { certificate != nil && key != nil }
    }

    /// One `listen` entry: `host:port` (plain HTTP) or `https://host:port` (TLS),
    /// either followed by ` proxy_protocol` when connections start with a
    /// PROXY protocol header (as nginx spells it).
    public struct Listener: Sendable, Equatable {
        public var address: String
        public var tls: Bool
        public var proxyProtocol: Bool

        static let proxySuffix = " proxy_protocol"

        /// Parses `host:port`, `http://host:port` or `https://host:port`, each
        /// optionally followed by ` proxy_protocol`.
        public init(_ text: String) {
            var text = text.trimmingCharacters(in: .whitespaces)
            proxyProtocol = text.hasSuffix(Self.proxySuffix)
            if proxyProtocol { text = String(text.dropLast(Self.proxySuffix.count)).trimmingCharacters(in: .whitespaces) }
            if text.hasPrefix("https://") { address = String(text.dropFirst(8)); tls = true }
            else if text.hasPrefix("http://") { address = String(text.dropFirst(7)); tls = false }
            else { address = text; tls = false }
            if address.hasSuffix("/") { address.removeLast() }
        }

        /// How the `listen` list spells it.
        public var text: String { (tls ? "https://" + address : address) + (proxyProtocol ? Self.proxySuffix : "") }
    }

    /// The `listen` entries, parsed.
    public var listeners: [Listener] { listen.map(Listener.init) }

    /// One `listen` item from YAML: a string, or `{address: host:port, tls: true, proxy_protocol: true}`.
    static func listenEntry(_ item: Any, source: String) throws -> String {
        guard let map = item as? [String: Any] else { return "\(item)" }
        var address: String?, tls = false, proxyProtocol = false
        for (key, value) in map {
            switch key {
            case "address": address = "\(value)"
            case "tls", "proxy_protocol":
                guard let b = value as? Bool else { throw Invalid("\(source): listen[].\(key) must be true or false") }
                if key == "tls" { tls = b } else { proxyProtocol = b }
            default: throw Invalid("\(source): listen: unknown setting \"\(key)\" (use address, tls, proxy_protocol)")
            }
        }
        guard let address else { throw Invalid("\(source): a listen mapping needs address: host:port") }
        return (tls ? "https://" : "") + address + (proxyProtocol ? Listener.proxySuffix : "")
    }

    /// The `tls:` mapping of the config file.
    mutating func applyTLS(_ value: Any, source: String) throws {
        guard let map = value as? [String: Any] else { throw Invalid("\(source): tls must be a mapping (certificate, key, hsts)") }
        for (key, v) in map {
            guard ["certificate", "key", "hsts"].contains(key) else {
                throw Invalid("\(source): tls: unknown setting \"\(key)\" (use certificate, key, hsts)")
            }
            try set("tls_" + key, v, source: source)
        }
    }

    /// Sets a network setting; false when `key` is not one.
    mutating func setNetwork(_ key: String, _ value: Any, source: String) throws -> Bool {
        switch key {
        case "tls_certificate": tls.certificate = Self.expandingCredentials("\(value)")
        case "tls_key": tls.key = Self.expandingCredentials("\(value)")
        case "tls_hsts":
            // false, "" or "off" sends no header.
            let text = "\(value)"
            tls.hsts = (value as? Bool == false || text.isEmpty || text == "off" || text == "false") ? nil : text
        case "trusted_proxies":
            let items = (value as? [Any])?.map { "\($0)" }
                ?? "\(value)".split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            do { _ = try TrustedProxies(items) } catch { throw Invalid("\(source): trusted_proxies: \(error)") }
            trustedProxies = items
        case "forwarded_header":
            guard let header = TrustedProxies.Header(named: "\(value)") else {
                throw Invalid("\(source): forwarded_header must be X-Forwarded-For or Forwarded")
            }
            forwardedHeader = header.name
        case "header_timeout":
            guard let i = (value as? Int) ?? Int("\(value)"), (1...3600).contains(i) else {
                throw Invalid("\(source): header_timeout must be a whole number of seconds from 1 to 3600")
            }
            headerTimeout = i
        case "max_connections_per_address":
            guard let i = (value as? Int) ?? Int("\(value)"), (0...1_000_000).contains(i) else {
                throw Invalid("\(source): max_connections_per_address must be a whole number from 0 (no limit) to 1000000")
            }
            maxConnectionsPerAddress = i
        default:
            return false
        }
        return true
    }

    /// The proxies to believe, as the HTTP server takes them.
    public func proxies() throws -> TrustedProxies {
        try TrustedProxies(trustedProxies, header: TrustedProxies.Header(named: forwardedHeader) ?? .xForwardedFor)
    }

    /// `$CREDENTIALS_DIRECTORY` (or `${CREDENTIALS_DIRECTORY}`) in a path becomes
    /// the directory systemd's `LoadCredential=` fills.
    static func expandingCredentials(_ path: String) -> String {
        guard let dir = ProcessInfo.processInfo.environment["CREDENTIALS_DIRECTORY"] else { return path }
        return path.replacingOccurrences(of: "${CREDENTIALS_DIRECTORY}", with: dir)
            .replacingOccurrences(of: "$CREDENTIALS_DIRECTORY", with: dir)
    }
}
