/// Which peers may tell Roost who the client is, and the client address
/// that follows from a request.
///
/// A forwarding header is believed only when the TCP peer is a trusted
/// proxy, and then only as far as trusted proxies wrote it: walking the list
/// from the right (the entry the nearest proxy appended), the first address
/// that is not a trusted proxy is the client. Anything an untrusted client
/// wrote lies to the left of that and is never read. An entry that is not an
/// IP address (`unknown`, an obfuscated `_name`) ends the walk, and the
/// nearest trusted hop that reported it stands as the client.
///
/// ```swift
/// let proxies = try TrustedProxies(["127.0.0.1", "10.0.0.0/8"])
/// proxies.clientAddress(peer: "127.0.0.1", headers: ["X-Forwarded-For: 6.6.6.6, 203.0.113.9"])  // "203.0.113.9"
/// ```
public struct TrustedProxies: Sendable {
    /// The header a trusted proxy writes. Only one is read: a proxy passes
    /// the other through from the client untouched, so it could be forged.
    public struct Header: Sendable, Equatable {
        enum Kind: Sendable { case xForwardedFor, forwarded }
        let kind: Kind
        public let name: String
        public static let xForwardedFor = Header(kind: .xForwardedFor, name: "X-Forwarded-For")
        /// RFC 7239 `Forwarded: for=…`.
        public static let forwarded = Header(kind: .forwarded, name: "Forwarded")

        public init?(named name: String) {
            switch name.lowercased() {
            case "x-forwarded-for": self = .xForwardedFor
            case "forwarded": self = .forwarded
            default: return nil
            }
        }

        init(kind: Kind, name: String) {
            self.kind = kind
            self.name = name
        }
    }

    public struct Invalid: Error, CustomStringConvertible {
        public let description: String
    }

    /// Networks as (address, prefix length on the 16-byte form).
    let networks: [(address: IPAddress, bits: Int)]
    public let header: Header
    public let entries: [String]

    public var isEmpty: Bool { networks.isEmpty }

    /// Trusts nobody: every request's client is its TCP peer.
    public static let none = TrustedProxies(networks: [], header: .xForwardedFor, entries: [])

    init(networks: [(address: IPAddress, bits: Int)], header: Header, entries: [String]) {
        self.networks = networks
        self.header = header
        self.entries = entries
    }

    /// - Parameter entries: addresses (`10.0.0.5`, `::1`) or CIDRs (`10.0.0.0/8`, `fd00::/8`).
    public init(_ entries: [String] = [], header: Header = .xForwardedFor) throws {
        self.entries = entries
        self.header = header
        networks = try entries.map { entry in
            let parts = entry.split(separator: "/", maxSplits: 1).map(String.init)
            guard let address = parts.first.flatMap({ IPAddress($0) }) else {
                throw Invalid(description: "\"\(entry)\" is not an IP address or CIDR")
            }
            let width = address.isIPv4 ? 32 : 128
            var bits = width
            if parts.count == 2 {
                guard let n = Int(parts[1]), (0...width).contains(n) else {
                    throw Invalid(description: "\"\(entry)\": the prefix length must be 0 to \(width)")
                }
                bits = n
            }
            return (address.masked(bits: bits + (128 - width)), bits + (128 - width))
        }
    }

    public func contains(_ address: IPAddress) -> Bool {
        networks.contains { address.matches($0.address, bits: $0.bits) }
    }

    /// The client's address for a request from `peer` carrying `headers`.
    /// With no trusted proxies this is `peer`, untouched.
    public func clientAddress(peer: String, headers: Headers) -> String {
        guard !networks.isEmpty, let peerAddress = IPAddress(peer), contains(peerAddress) else { return peer }
        var client = peerAddress
        for entry in hops(headers).reversed() {
            guard let address = IPAddress(withOptionalPort: entry) else { break }
            client = address
            if !contains(address) { break }
        }
        return client.description
    }

    /// The addresses the header lists, left (farthest) to right (nearest);
    /// several fields of the header count as one list, in order.
    func hops(_ headers: Headers) -> [String] {
        var out: [String] = []
        for field in headers where field.name.caseInsensitiveEquals(header.name) {
            for element in field.value.split(separator: ",", omittingEmptySubsequences: false) {
                switch header.kind {
                case .xForwardedFor:
                    out.append(element.trimmingSpaces)
                case .forwarded:
                    // for=192.0.2.60;proto=https, for="[2001:db8::17]:4711"; an element without for= is unknown.
                    let pair = element.split(separator: ";").first { $0.trimmingSpaces.lowercased().hasPrefix("for=") }
                    var value = pair.map { $0.trimmingSpaces.dropFirst(4) } ?? "unknown"[...]
                    if value.hasPrefix("\""), value.hasSuffix("\""), value.count >= 2 { value = value.dropFirst().dropLast() }
                    out.append(String(value))
                }
            }
        }
        return out
    }
}

