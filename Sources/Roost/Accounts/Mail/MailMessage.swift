import Foundation

/// An RFC 5322 message with a text and an HTML alternative, as the outbox
/// stores it: CRLF line ends, each part base64 (any UTF-8, short lines), a
/// non-ASCII subject as an RFC 2047 encoded word.
enum MailMessage {
    static func build(from: String, fromName: String, to: String, subject: String, text: String, html: String,
                      date: Date = Date()) -> String {
        let boundary = "roost-" + UUID().uuidString
        let domain = from.split(separator: "@").last.map(String.init) ?? "localhost"
        let lines = [
            "From: \(encodedWord(fromName)) <\(from)>",
            "To: <\(to)>",
            "Subject: \(encodedWord(subject))",
            "Date: \(rfc5322Date(date))",
            "Message-ID: <\(UUID().uuidString.lowercased())@\(domain)>",
            "MIME-Version: 1.0",
            "Content-Type: multipart/alternative; boundary=\"\(boundary)\"",
            "",
            "--\(boundary)",
            "Content-Type: text/plain; charset=utf-8",
            "Content-Transfer-Encoding: base64",
            "",
            base64Lines(text),
            "--\(boundary)",
            "Content-Type: text/html; charset=utf-8",
            "Content-Transfer-Encoding: base64",
            "",
            base64Lines(html),
            "--\(boundary)--",
            "",
        ]
        return lines.joined(separator: "\r\n")
    }

    /// ASCII without specials as is; anything else as `=?UTF-8?B?…?=`.
    static func encodedWord(_ s: String) -> String {
        let clean = s.filter { $0 != "\r" && $0 != "\n" }
        if clean.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value < 0x7F && !"\"<>()=?".unicodeScalars.contains($0) }) { return clean }
        return "=?UTF-8?B?" + Data(clean.utf8).base64EncodedString() + "?="
    }

    static func base64Lines(_ s: String) -> String {
        Data(s.utf8).base64EncodedString(options: [.lineLength76Characters, .endLineWithCarriageReturn, .endLineWithLineFeed])
    }

    static func rfc5322Date(_ date: Date) -> String {
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.timeZone = TimeZone(identifier: "UTC")
        f.dateFormat = "EEE, dd MMM yyyy HH:mm:ss '+0000'"
        return f.string(from: date)
    }
}
