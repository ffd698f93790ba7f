/// A role's name, checked once: 1 to 64 characters of `[A-Za-z0-9_.-]`.
/// `_acl.read` and `_acl.write` name a role as `role:<name>`.
public struct RoleName: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let text: String

    /// nil when `text` is not a valid role name.
    public init?(_ text: String) {
        guard Self.isValid(text) else { return nil }
        self.text = text
    }

    /// The name, or 400 with the rule.
    public static func parse(_ text: String) throws(StoreError) -> RoleName {
        guard let name = RoleName(text) else { throw .invalid(rule) }
        return name
    }

    public static let rule = "A role name is 1 to 64 characters: letters, digits, '_', '.' and '-'."

    /// The prefix an `_acl` entry that names a role starts with.
    public static let aclPrefix = "role:"

    /// How `_acl.read` / `_acl.write` name this role.
    public var aclEntry: String { Self.aclPrefix + text }

    public var description: String { text }

    public static func < (a: RoleName, b: RoleName) -> Bool { a.text < b.text }

    public static func isValid(_ text: String) -> Bool {
        let bytes = text.utf8
        return (1...64).contains(bytes.count) && bytes.allSatisfy { c in
            (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122)
                || c == UInt8(ascii: "_") || c == UInt8(ascii: ".") || c == UInt8(ascii: "-")
        }
    }
}
