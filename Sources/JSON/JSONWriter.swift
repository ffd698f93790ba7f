extension JSONValue {
    /// Compact JSON text, keys in their stored order.
    public var jsonText: String {
        var out = ""
        out.reserveCapacity(64)
        JSONWriter.write(self, into: &out)
        return out
    }
}

extension JSONObject {
    public var jsonText: String { JSONValue.object(self).jsonText }
}

/// Serialises `JSONValue`s to compact RFC 8259 text.
public enum JSONWriter {
    public static func write(_ value: JSONValue, into out: inout String) {
        switch value {
        case .null: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .int(let i): out += String(i)
        case .double(let d): out += formatDouble(d)
        case .string(let s): writeString(s, into: &out)
        case .array(let a):
            out += "["
            for (i, v) in a.enumerated() {
                if i > 0 { out += "," }
                write(v, into: &out)
            }
            out += "]"
        case .object(let o):
            out += "{"
            for (i, m) in o.members.enumerated() {
                if i > 0 { out += "," }
                writeString(m.key, into: &out)
                out += ":"
                write(m.value, into: &out)
            }
            out += "}"
        }
    }

    /// Doubles that hold whole numbers print without a fraction, like JavaScript.
    static func formatDouble(_ d: Double) -> String {
        if d.isFinite, d == d.rounded(), abs(d) < 1e15 { return String(Int64(d)) }
        if !d.isFinite { return "null" }
        return "\(d)"
    }

    public static func writeString(_ s: String, into out: inout String) {
        out += "\""
        var needsEscape = false
        for b in s.utf8 where b < 0x20 || b == 0x22 || b == 0x5C { needsEscape = true; break }
        if !needsEscape {
            out += s
        } else {
            for scalar in s.unicodeScalars {
                switch scalar {
                case "\"": out += "\\\""
                case "\\": out += "\\\\"
                case "\n": out += "\\n"
                case "\r": out += "\\r"
                case "\t": out += "\\t"
                case "\u{08}": out += "\\b"
                case "\u{0C}": out += "\\f"
                default:
                    if scalar.value < 0x20 {
                        let hex = String(scalar.value, radix: 16)
                        out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                    } else {
                        out.unicodeScalars.append(scalar)
                    }
                }
            }
        }
        out += "\""
    }

    /// A JSON string literal for `s`, quotes included.
    public static func quoted(_ s: String) -> String {
        var out = ""
        writeString(s, into: &out)
        return out
    }
}
