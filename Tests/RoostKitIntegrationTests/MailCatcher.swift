import Foundation

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

    var port: Int { listener.port }
    private var listener: LoopbackListener!
    private let lock = NSLock()
    private var received: [Mail] = []

    init() throws {
        listener = try LoopbackListener { [weak self] connection in self?.serve(connection) }
    }

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
        throw LoopbackListener.Failure("no mail to \(address) within \(timeout) s (got \(mails.count) in all)")
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

    private func serve(_ connection: LoopbackListener.Connection) {
        connection.send(line: "220 mailcatcher ESMTP")
        var recipients: [String] = []
        while let line = connection.readLine() {
            switch line.prefix(4).uppercased() {
            case "EHLO": connection.send(line: "250-mailcatcher"); connection.send(line: "250 8BITMIME")
            case "HELO": connection.send(line: "250 mailcatcher")
            case "MAIL": recipients = []; connection.send(line: "250 OK")
            case "RCPT": recipients.append(String(line.dropFirst(8))); connection.send(line: "250 OK")
            case "DATA":
                connection.send(line: "354 go ahead")
                var lines: [String] = []
                while let l = connection.readLine(), l != "." { lines.append(l.hasPrefix("..") ? String(l.dropFirst()) : l) }
                let mail = Mail(recipients: recipients, text: Self.bodyText(lines))
                lock.withLock { received.append(mail) }
                connection.send(line: "250 OK queued")
            case "QUIT": connection.send(line: "221 bye"); return
            default: connection.send(line: "250 OK")
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
