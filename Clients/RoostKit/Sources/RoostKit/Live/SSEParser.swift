import Foundation

/// One Server-Sent Event as the stream delivered it.
public struct SSEEvent: Sendable, Hashable {
    /// The `id:` field (the stream's last event id after this event), if sent.
    public var id: String?
    /// The `event:` field, `message` when absent.
    public var event: String
    /// The `data:` lines, joined by newlines.
    public var data: String
    /// The `retry:` field: milliseconds the server asks clients to wait before reconnecting.
    public var retry: Int?
}

/// The Server-Sent Events wire format (the WHATWG "event stream" rules) as a
/// pure state machine: feed it bytes in chunks of any size, get whole events.
///
/// Lines end in LF, CR or CRLF (a CRLF split across chunks counts once); a
/// blank line dispatches the event; `:` lines are comments; an event with no
/// data is dropped (its `id` still counts).
public struct SSEParser: Sendable {
    private var line: [UInt8] = []
    private var afterCR = false
    private var data: [String] = []
    private var hasData = false
    private var eventType = ""
    private var pendingID: String?
    private var retry: Int?

    public init() {}

    /// Consumes `chunk` and returns the events it completed.
    public mutating func feed(_ chunk: Data) -> [SSEEvent] {
        var out: [SSEEvent] = []
        for byte in chunk {
            if afterCR {
                afterCR = false
                if byte == 0x0A { continue }
            }
            switch byte {
            case 0x0D: afterCR = true; endLine(&out)
            case 0x0A: endLine(&out)
            default: line.append(byte)
            }
        }
        return out
    }

    private mutating func endLine(_ out: inout [SSEEvent]) {
        defer { line.removeAll(keepingCapacity: true) }
        if line.isEmpty { return dispatch(&out) }
        if line.first == UInt8(ascii: ":") { return }
        let text = String(decoding: line, as: UTF8.self)
        let field: Substring, value: Substring
        if let colon = text.firstIndex(of: ":") {
            field = text[..<colon]
            let rest = text[text.index(after: colon)...]
            value = rest.first == " " ? rest.dropFirst() : rest
        } else {
            (field, value) = (text[...], "")
        }
        switch field {
        case "data": data.append(String(value)); hasData = true
        case "event": eventType = String(value)
        case "id": if !value.contains("\0") { pendingID = String(value) }
        case "retry": if let ms = Int(value), value.allSatisfy(\.isNumber) { retry = ms }
        default: break
        }
    }

    private mutating func dispatch(_ out: inout [SSEEvent]) {
        defer { data = []; hasData = false; eventType = ""; retry = nil }
        let id = pendingID
        pendingID = nil
        guard hasData else {
            if id != nil || retry != nil { out.append(SSEEvent(id: id, event: "", data: "", retry: retry)) }
            return
        }
        out.append(SSEEvent(id: id, event: eventType.isEmpty ? "message" : eventType, data: data.joined(separator: "\n"), retry: retry))
    }
}
