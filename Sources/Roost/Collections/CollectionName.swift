/// Rules for collection names: `[A-Za-z][A-Za-z0-9_-]*`, at most 64
/// characters, and none of the names Roost's own endpoints use.
public enum CollectionName {
    public static let reserved: Set<String> = [
        "files", "users", "login", "logout", "push", "admin", "events", "healthz", "readyz", "metrics",
        // The scripts' functions (`/fn/<name>`).
        "fn",
    ]

    /// True when `name` has the allowed shape (reserved or not).
    public static func isWellFormed(_ name: String) -> Bool {
        guard let first = name.utf8.first, name.utf8.count <= 64 else { return false }
        let isLetter = { (c: UInt8) in (c >= 65 && c <= 90) || (c >= 97 && c <= 122) }
        return isLetter(first) && name.utf8.allSatisfy { c in
            isLetter(c) || (c >= 48 && c <= 57) || c == UInt8(ascii: "_") || c == UInt8(ascii: "-")
        }
    }

    public static func isReserved(_ name: String) -> Bool { reserved.contains(name) || name.hasPrefix("_") }

    public static func isValid(_ name: String) -> Bool { isWellFormed(name) && !isReserved(name) }
}
