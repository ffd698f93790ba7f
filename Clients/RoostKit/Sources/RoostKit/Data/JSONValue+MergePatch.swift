import Foundation

extension JSONValue {
    /// This value with a JSON Merge Patch (RFC 7396) applied, as the server's
    /// `PATCH` applies it: `null` members remove, objects merge recursively,
    /// anything else replaces.
    public func merging(patch: JSONValue) -> JSONValue {
        guard case .object(let changes) = patch else { return patch }
        var target = objectValue ?? [:]
        for (key, change) in changes {
            if change == .null { target[key] = nil } else { target[key] = (target[key] ?? .null).merging(patch: change) }
        }
        return .object(target)
    }
}
