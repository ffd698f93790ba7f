import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A TCP listener on 127.0.0.1 (a port the kernel picks) that serves each
/// connection on its own thread: the base of the tests' stand-ins for a mail
/// server (``MailCatcher``) and an OpenID provider (``OIDCIssuer``).
final class LoopbackListener: @unchecked Sendable {
    let port: Int
    private let fd: Int32

    struct Failure: Error, CustomStringConvertible { let description: String; init(_ d: String) { description = d } }

    /// One accepted connection, read line by line.
    final class Connection {
        private let fd: Int32
        private var buffer: [UInt8] = []
        init(_ fd: Int32) { self.fd = fd }

        func send(_ bytes: [UInt8]) {
            var offset = 0
            while offset < bytes.count {
                let n = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
                if n <= 0 { return }
                offset += n
            }
        }

        func send(line: String) { send(Array((line + "\r\n").utf8)) }

        private func fill() -> Bool {
            var chunk = [UInt8](repeating: 0, count: 4096)
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, 4096) }
            if n <= 0 { return false }
            buffer += chunk[..<n]
            return true
        }

        /// The next line without its CRLF, or nil at the end.
        func readLine() -> String? {
            while true {
                if let i = buffer.firstIndex(of: 10) {
                    let line = String(decoding: buffer[..<i], as: UTF8.self)
                    buffer.removeSubrange(...i)
                    return line.hasSuffix("\r") ? String(line.dropLast()) : line
                }
                if !fill() { return nil }
            }
        }
    }

    init(serve: @escaping @Sendable (Connection) -> Void) throws {
        #if canImport(Glibc)
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { throw Failure("socket failed") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let listening = fd
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listening, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 16) == 0 else { close(fd); throw Failure("bind/listen failed") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listening, $0, &length) }
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread {
            while true {
                let connection = accept(listening, nil, nil)
                if connection < 0 { return }
                Thread {
                    defer { close(connection) }
                    serve(Connection(connection))
                }.start()
            }
        }.start()
    }

    private let stopped = NSLock()
    private var isStopped = false

    /// Stops accepting (the accept thread ends); once.
    func stop() {
        let first = stopped.withLock { () -> Bool in defer { isStopped = true }; return !isStopped }
        guard first else { return }
        shutdown(fd, Int32(SHUT_RDWR))
        close(fd)
    }

    deinit { stop() }
}
