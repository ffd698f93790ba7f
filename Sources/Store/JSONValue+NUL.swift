import JSON

extension JSONValue {
    /// SQLite's JSON functions end a string at U+0000, so a string holding
    /// one would be stored whole but compared cut short: refused instead.
    static let nulRefusal = "Strings and field names cannot contain U+0000 (NUL): Roost could not compare them whole."

    /// Whether any key or string inside holds U+0000.
    var containsNUL: Bool {
        switch self {
        case .string(let s): return s.utf8.contains(0)
        case .array(let items): return items.contains { $0.containsNUL }
        case .object(let o): return o.contains { key, value in key.utf8.contains(0) || value.containsNUL }
        default: return false
        }
    }
}
