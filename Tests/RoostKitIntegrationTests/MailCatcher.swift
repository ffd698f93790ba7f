import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A plain SMTP server on 127.0.0.1 that keeps every message it is sent, for
/// the account tests: roostd delivers its verification, reset and
/// email-change mails here (`smtp_url: smtp://127.0.0.1:<port>`, `smtp_tls: off`).
/// Enough SMTP for one client: EHLO/HELO, MAIL, RCPT, DATA, RSET, NOOP, QUIT.
final class MailCatcher: @unchecked Sendable {
    /// One received message: its recipients and its text (roostd sends
    /// multipart/alternative with base64 parts; the parts are decoded).
    struct Mail: Sendable {
        let recipients: [String]
        let text: String

        /// The first 6-digit code in the message.
        var code: String? {
            text.firstMatch(#"(?<![0-9A-Za-z])[0-9]{6}(?![0-9A-Za-z])"#)
        }

        /// The token of the message's link (`…?token=…`).
        var token: String? {
            text.firstMatch(#"token=[A-Za-z0-9_-]+"#).map { String($0.dropFirst("token=".count)) }
        }
    }

    private(set) var port: Int = 0
    private let listener: Int32
    private let lock = NSLock()
    private var received: [Mail] = []

    init() throws {
        #if canImport(Glibc)
        listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        listener = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard listener >= 0 else { throw Failure("socket failed") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(listener, 8) == 0 else { throw Failure("bind/listen failed") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        let thread = Thread { [weak self] in self?.acceptLoop() }
        thread.start()
    }

    deinit { close(listener) }

    struct Failure: Error, CustomStringConvertible { let description: String; init(_ d: String) { description = d } }

    /// Every message so far.
    var mails: [Mail] { lock.withLock { received } }

    /// Waits (up to `timeout` seconds) for a message to `address` beyond the
    /// first `after` ones to it, and returns it.
    func waitForMail(to address: String, after: Int = 0, timeout: TimeInterval = 20) async throws -> Mail {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let to = mails.filter { $0.recipients.contains { $0.lowercased().contains(address.lowercased()) } }
            if to.count > after { return to[after] }
            try await Task.sleep(nanoseconds: 50_000_000)
        }
        throw Failure("no mail to \(address) within \(timeout) s (got \(mails.count) in all)")
    }

    /// How many messages went to `address`.
    func count(to address: String) -> Int {
        mails.filter { $0.recipients.contains { $0.lowercased().contains(address.lowercased()) } }.count
    }

    /// The decoded text of the message's base64 parts (headers, boundaries
    /// and ids left out: a boundary's UUID may hold six digits in a row).
    static func bodyText(_ lines: [String]) -> String {
        var out: [String] = []
        var base64 = false, inPart = false, encoded = ""
        for line in lines {
            if line.hasPrefix("--") {
                if inPart, let data = Data(base64Encoded: encoded) { out.append(String(decoding: data, as: UTF8.self)) }
                inPart = false; base64 = false; encoded = ""
            } else if line.lowercased() == "content-transfer-encoding: base64" {
                base64 = true
            } else if base64, !inPart, line.isEmpty {
                inPart = true
            } else if inPart {
                encoded += line
            }
        }
        return out.joined(separator: "\n")
    }

    private func acceptLoop() {
        while true {
            let connection = accept(listener, nil, nil)
            if connection < 0 { return }
            Thread { [weak self] in self?.serve(connection) }.start()
        }
    }

    private func serve(_ fd: Int32) {
        defer { close(fd) }
        var buffer = [UInt8]()
        func send(_ line: String) { let bytes = Array((line + "\r\n").utf8); _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) } }
        func readLine() -> String? {
            while true {
                if let i = buffer.firstIndex(of: 10) {
                    let line = String(decoding: buffer[..<i], as: UTF8.self)
                    buffer.removeSubrange(...i)
                    return line.hasSuffix("\r") ? String(line.dropLast()) : line
                }
                var chunk = [UInt8](repeating: 0, count: 4096)
                let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, 4096) }
                if n <= 0 { return nil }
                buffer += chunk[..<n]
            }
        }
        send("220 mailcatcher ESMTP")
        var recipients: [String] = []
        while let line = readLine() {
            let verb = line.prefix(4).uppercased()
            switch verb {
            case "EHLO": send("250-mailcatcher"); send("250 8BITMIME")
            case "HELO": send("250 mailcatcher")
            case "MAIL": recipients = []; send("250 OK")
            case "RCPT": recipients.append(String(line.dropFirst(8))); send("250 OK")
            case "DATA":
                send("354 go ahead")
                var lines: [String] = []
                while let l = readLine(), l != "." { lines.append(l.hasPrefix("..") ? String(l.dropFirst()) : l) }
                let mail = Mail(recipients: recipients, text: Self.bodyText(lines))
                lock.withLock { received.append(mail) }
                send("250 OK queued")
            case "QUIT": send("221 bye"); return
            default: send("250 OK")
            }
        }
    }
}

extension String {
    func firstMatch(_ pattern: String) -> String? {
        guard let range = range(of: pattern, options: .regularExpression) else { return nil }
        return String(self[range])
    }
}
