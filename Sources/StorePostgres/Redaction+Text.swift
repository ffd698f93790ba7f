import JSON
import Store

/// `Redaction` applied to a stored document's JSON text, as SQLite's
/// `json_remove` gives it: the top-level members named by `fields` are
/// dropped and every other member is kept byte for byte (its key's and
/// value's text as stored), except in the row whose `_id` is `exceptID`,
/// which is returned unchanged. Stored texts are compact (`jsonText`), so the
/// result is what `json_remove` renders.
extension Redaction {
    func applied(to text: String) -> String {
        guard !fields.isEmpty, let members = TopLevelMembers(text) else { return text }
        if let exceptID, members.value(of: "_id") == .string(exceptID) { return text }
        let removed = Set(fields)
        let kept = members.all.filter { !removed.contains($0.key) }
        guard kept.count < members.all.count else { return text }
        return "{" + kept.map { members.text($0.range) }.joined(separator: ",") + "}"
    }
}

/// The top-level members of a JSON object's text: each key (decoded) and the
/// byte range of `"key":value`. Nil when the text is not an object.
struct TopLevelMembers {
    let bytes: [UInt8]
    private(set) var all: [(key: String, range: Range<Int>, value: Range<Int>)] = []

    init?(_ text: String) {
        bytes = Array(text.utf8)
        var i = skipSpace(0)
        guard i < bytes.count, bytes[i] == UInt8(ascii: "{") else { return nil }
        i = skipSpace(i + 1)
        if i < bytes.count, bytes[i] == UInt8(ascii: "}") { return }
        while i < bytes.count {
            let start = i
            guard bytes[i] == UInt8(ascii: "\""), let keyEnd = endOfString(i),
                  case .string(let key)? = try? JSONParser.parse(String(decoding: bytes[start..<keyEnd], as: UTF8.self)) else { return nil }
            i = skipSpace(keyEnd)
            guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else { return nil }
            let valueStart = skipSpace(i + 1)
            guard let valueEnd = endOfValue(valueStart) else { return nil }
            all.append((key, start..<valueEnd, valueStart..<valueEnd))
            i = skipSpace(valueEnd)
            guard i < bytes.count else { return nil }
            if bytes[i] == UInt8(ascii: "}") { return }
            guard bytes[i] == UInt8(ascii: ",") else { return nil }
            i = skipSpace(i + 1)
        }
        return nil
    }

    func text(_ range: Range<Int>) -> String { String(decoding: bytes[range], as: UTF8.self) }

    /// The decoded value of the member `key`, if present.
    func value(of key: String) -> JSONValue? {
        guard let member = all.first(where: { $0.key == key }) else { return nil }
        return try? JSONParser.parse(text(member.value))
    }

    private func skipSpace(_ from: Int) -> Int {
        var i = from
        while i < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[i]) { i += 1 }
        return i
    }

    /// The index just past the string starting at `start` (a quote).
    private func endOfString(_ start: Int) -> Int? {
        var i = start + 1
        while i < bytes.count {
            switch bytes[i] {
            case UInt8(ascii: "\\"): i += 2
            case UInt8(ascii: "\""): return i + 1
            default: i += 1
            }
        }
        return nil
    }

    /// The index just past the value starting at `start`.
    private func endOfValue(_ start: Int) -> Int? {
        guard start < bytes.count else { return nil }
        switch bytes[start] {
        case UInt8(ascii: "\""):
            return endOfString(start)
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            var depth = 0, i = start
            while i < bytes.count {
                switch bytes[i] {
                case UInt8(ascii: "\""):
                    guard let end = endOfString(i) else { return nil }
                    i = end
                    continue
                case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    depth -= 1
                    if depth == 0 { return i + 1 }
                default: break
                }
                i += 1
            }
            return nil
        default:
            var i = start
            while i < bytes.count, !Self.endsScalar(bytes[i]) { i += 1 }
            return i == start ? nil : i
        }
    }

    private static func endsScalar(_ b: UInt8) -> Bool {
        [UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), 0x20, 0x09, 0x0A, 0x0D].contains(b)
    }
}
