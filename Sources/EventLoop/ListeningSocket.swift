import CEvent
import Foundation

/// A bound, listening TCP socket.
///
/// `bindGroup` gives each event loop its own socket on one address with
/// `SO_REUSEPORT`, so the kernel spreads new connections across loops. It
/// first checks, with a plain bind, that nobody listens there yet: a second
/// daemon on the same port fails loudly instead of silently sharing it.
public struct ListeningSocket: Sendable {
    public let fd: Int32
    public let host: String
    public let port: Int

    public enum BindError: Error, CustomStringConvertible {
        case badAddress(String)
        case system(String, Int32)
        public var description: String {
            switch self {
            case .badAddress(let a): return "cannot parse listen address \"\(a)\" (use host:port)"
            case .system(let what, let err): return "\(what): \(String(cString: strerror(err)))"
            }
        }
    }

    /// Splits `host:port` or `[v6]:port`.
    public static func parse(_ address: String) throws -> (host: String, port: Int) {
        guard let colon = address.lastIndex(of: ":"), let port = Int(address[address.index(after: colon)...]),
              (0...65535).contains(port) else { throw BindError.badAddress(address) }
        var host = String(address[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if host.isEmpty { host = "0.0.0.0" }
        return (host, port)
    }

    /// `count` sockets listening on `address` with `SO_REUSEPORT`, one per loop.
    /// Port 0 picks one free port for the whole group.
    public static func bindGroup(_ address: String, count: Int, backlog: Int32 = 1024) throws -> [ListeningSocket] {
        var (host, port) = try parse(address)
        if port != 0 {
            // Refuse a port someone already listens on, SO_REUSEPORT or not.
            let probe = try bind("\(bracketed(host)):\(port)", reusePort: false, listening: false)
            close(probe.fd)
        }
        var group: [ListeningSocket] = []
        do {
            for _ in 0..<max(1, count) {
                let socket = try bind("\(bracketed(host)):\(port)", backlog: backlog, reusePort: true)
                port = socket.port
                group.append(socket)
            }
        } catch {
            for s in group { close(s.fd) }
            throw error
        }
        return group
    }

    static func bracketed(_ host: String) -> String { host.contains(":") ? "[\(host)]" : host }

    /// Binds and listens on `address` (`host:port`; port 0 picks a free one).
    public static func bind(_ address: String, backlog: Int32 = 1024, reusePort: Bool = false, listening: Bool = true) throws -> ListeningSocket {
        let (host, port) = try parse(address)
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV
        var result: UnsafeMutablePointer<addrinfo>?
        let rc = getaddrinfo(host, String(port), &hints, &result)
        guard rc == 0, let info = result else { throw BindError.badAddress(address) }
        defer { freeaddrinfo(result) }
        let fd = socket(info.pointee.ai_family, info.pointee.ai_socktype | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw BindError.system("socket", errno) }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        if reusePort { setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, socklen_t(MemoryLayout<Int32>.size)) }
        noDelay(fd)
        guard Glibc.bind(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 else {
            let err = errno
            close(fd)
            throw BindError.system("cannot bind \(address)", err)
        }
        guard !listening || listen(fd, backlog) == 0 else {
            let err = errno
            close(fd)
            throw BindError.system("cannot listen on \(address)", err)
        }
        evutil_make_socket_nonblocking(fd)
        return ListeningSocket(fd: fd, host: host, port: boundPort(fd) ?? port)
    }

    /// Wraps a socket systemd (or another parent) passed in already listening.
    public static func inherited(fd: Int32) -> ListeningSocket {
        evutil_make_socket_nonblocking(fd)
        noDelay(fd)
        return ListeningSocket(fd: fd, host: "inherited", port: boundPort(fd) ?? 0)
    }

    /// TCP_NODELAY, which Linux copies to every accepted connection: a
    /// response's headers and its `sendfile` body are separate writes, and
    /// Nagle would hold a small body back until the client's delayed ACK.
    static func noDelay(_ fd: Int32) {
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }

    static func boundPort(_ fd: Int32) -> Int? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let ok = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) == 0 }
        }
        guard ok else { return nil }
        switch Int32(storage.ss_family) {
        case AF_INET:
            return withUnsafePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin_port)) } }
        case AF_INET6:
            return withUnsafePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin6_port)) } }
        default: return nil
        }
    }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
