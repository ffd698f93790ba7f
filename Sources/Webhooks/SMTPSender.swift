import CCurlShim

/// Blocking SMTP sends through libcurl (the same dlopen shim as webhook
/// POSTs), for worker threads only (never an event loop). One sender keeps
/// its connection open between messages (no new TCP and TLS handshake per
/// mail), so it is used by one thread at a time (the mail outbox's sender).
public final class SMTPSender: @unchecked Sendable {
    public enum TLS: String, Sendable, CaseIterable {
        /// Plain SMTP (a relay on loopback).
        case off
        /// STARTTLS when the server offers it.
        case `try`
        /// STARTTLS or fail (smtps:// is TLS from the start anyway).
        case require
    }

    /// The answer to one send: nil when accepted, else why not (and the last reply code).
    public struct Failure: Error, Sendable {
        public let reply: Int
        public let message: String
        /// 5xx: the server refused for good (retrying the same message will not help).
        public var isPermanent: Bool { (500..<600).contains(reply) }
    }

    public let url: String
    public let username: String?
    public let password: String?
    public let tls: TLS
    public let timeoutMilliseconds: Int
    /// libcurl's handle with the open connection (nil before the first send and after a failure).
    private var session: UnsafeMutableRawPointer?

    public init(url: String, username: String?, password: String?, tls: TLS, timeoutMilliseconds: Int) {
        self.url = url
        self.username = username
        self.password = password
        self.tls = tls
        self.timeoutMilliseconds = timeoutMilliseconds
    }

    deinit { roost_curl_smtp_close(session) }

    /// Sends `message` (a whole RFC 5322 message, CRLF line ends) from `from` to `recipient`.
    public func send(from: String, to recipient: String, message: String) -> Failure? {
        var result = roost_curl_result()
        let mode: roost_smtp_tls = switch tls {
        case .off: ROOST_SMTP_TLS_OFF
        case .try: ROOST_SMTP_TLS_TRY
        case .require: ROOST_SMTP_TLS_REQUIRE
        }
        let bytes = Array(message.utf8)
        guard !bytes.isEmpty else { return Failure(reply: 0, message: "empty message") }
        let rc = bytes.withUnsafeBufferPointer { buffer in
            buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: bytes.count) { text in
                roost_curl_smtp(url, "<\(from)>", "<\(recipient)>", text, bytes.count, username, password, mode, timeoutMilliseconds, &session, &result)
            }
        }
        guard rc != 0 else { return nil }
        let why = withUnsafeBytes(of: result.error) { raw in String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self) }
        return Failure(reply: Int(result.status), message: why.isEmpty ? "SMTP error" : why)
    }
}
