import Store

/// `collections.users.rules` and `collections.files.rules`: the built-in
/// collections take access rules too (docs/RULES.md), and nothing else under
/// `collections` (their levels are fixed: users are `shared` with
/// `private_user_fields`, files follow `files_permission`). Operations their
/// own endpoints decide are refused when the config is read.
public enum BuiltInRules: String {
    case users
    case files

    /// The operations a rule may govern here, and why the others may not.
    var refused: [String: String] {
        switch self {
        case .users:
            return ["create": "sign-ups create users (POST /users, /auth/...): refuse one in a beforeCreate hook or script"]
        case .files:
            return ["update": "files are never changed in place (upload a new one)"]
        }
    }

    /// The level as `roostd check-config` shows it.
    public func level(_ config: RoostConfig) -> String {
        self == .users ? "shared (built-in users)" : "\(config.filesPermission.rawValue) (files_permission)"
    }

    func collection(_ spec: Any) throws -> RoostConfig.Collection {
        let place = "collections.\(rawValue)"
        guard let map = spec as? [String: Any] else { throw RoostConfig.Invalid("\(place) must be a mapping") }
        var collection = RoostConfig.Collection()
        for (key, value) in map {
            if key == "on_user_delete" && self == .files {
                collection.onUserDelete = try RoostConfig.UserDeletePolicy.parse(value, at: "\(place).on_user_delete")
                continue
            }
            guard key == "rules" else {
                let level = self == .users ? "its level is fixed (shared, with private_user_fields)" : "files_permission sets its level"
                throw RoostConfig.Invalid("\(place): only rules\(self == .files ? " and on_user_delete" : "") can be set for the built-in \(rawValue) collection (\(level)); \"\(key)\" cannot.")
            }
            let rules = try RoostConfig.rules(rawValue, value)
            for (operation, rule) in [("create", rules.create), ("update", rules.update)] where rule != nil {
                if let why = refused[operation] { throw RoostConfig.Invalid("\(place).rules.\(operation): not for \(rawValue): \(why).") }
            }
            collection.rules = rules
        }
        return collection
    }
}
