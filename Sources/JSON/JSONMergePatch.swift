extension JSONValue {
    /// Applies an RFC 7396 JSON Merge Patch to this value.
    public func mergePatched(with patch: JSONValue) -> JSONValue {
        guard case .object(let patchObject) = patch else { return patch }
        var target = objectValue ?? JSONObject()
        for (key, value) in patchObject {
            if value == .null {
                target[key] = nil
            } else {
                target[key] = (target[key] ?? .null).mergePatched(with: value)
            }
        }
        return .object(target)
    }
}
