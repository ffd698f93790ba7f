import JSON

/// Who may read, create, change and delete a collection's documents: one
/// `AccessRule` per operation (docs/RULES.md). A missing rule falls back to
/// the collection's level, and every level is itself such a rule set
/// (`preset(_:)`), so an existing config means what it meant.
public struct CollectionRules: Sendable {
    /// Which documents a caller may see, in lists, counts, reads by id,
    /// delta sync, live streams, references and pushes.
    public let read: AccessRule?
    /// What a new document may be, as it would be stored.
    public let create: AccessRule?
    /// Which stored documents a caller may change, and what they may become
    /// (the rule must hold before and after; `@previous.*` reads the stored one).
    public let update: AccessRule?
    /// Which stored documents a caller may delete.
    public let delete: AccessRule?
    /// A short, stable digest of the rules as written: the same on every
    /// node for the same config, different when a rule changes (sync
    /// cursors carry it, so a changed rule makes older cursors 410).
    public let fingerprint: String

    public init(read: AccessRule? = nil, create: AccessRule? = nil, update: AccessRule? = nil, delete: AccessRule? = nil) {
        self.read = read
        self.create = create
        self.update = update
        self.delete = delete
        var text = ""
        for (name, rule) in [("read", read), ("create", create), ("update", update), ("delete", delete)] {
            if let rule { text += name + "=" + rule.source.jsonText + "\n" }
        }
        fingerprint = Digest.fnv1a(text)
    }

    /// The operations, by their config names.
    public static let operations = ["read", "create", "update", "delete"]

    /// Reads `rules: {read: …, create: …, update: …, delete: …}` at `place`
    /// (for messages), each rule a filter object.
    public init(_ json: JSONValue, at place: String) throws(RuleError) {
        guard case .object(let object) = json else { throw RuleError("\(place) must be a mapping of read, create, update and delete to filters.") }
        var rules: [String: AccessRule] = [:]
        for (key, value) in object {
            guard Self.operations.contains(key) else {
                throw RuleError("\(place): unknown operation \"\(key)\" (use read, create, update or delete).")
            }
            guard case .object = value else { throw RuleError("\(place).\(key) must be a filter object, such as {\"owner\": \"@caller.id\"}.") }
            rules[key] = try AccessRule(value, at: "\(place).\(key)", allowPrevious: key == "update")
        }
        self.init(read: rules["read"], create: rules["create"], update: rules["update"], delete: rules["delete"])
    }

    /// What `level` means, written as rules (the daemon enforces levels
    /// through its own faster paths; `RulePresetTests` proves they agree).
    public static func preset(_ level: AccessScope.Level) -> CollectionRules {
        func rule(_ text: String) -> AccessRule {
            // The presets are constants checked by the tests.
            try! AccessRule(try! JSONParser.parse(text), at: "preset", allowPrevious: false)
        }
        let signedIn = rule(#"{"@caller.signedIn": true}"#)
        let writer = rule(#"{"$or": [{"_acl.creator": "@caller.id"}, {"_acl.write": {"$in": "@caller.principals"}}]}"#)
        let admin = rule(#"{"@caller.admin": true}"#)
        switch level {
        case .public:
            let anyone = rule("{}")
            return CollectionRules(read: anyone, create: anyone, update: anyone, delete: anyone)
        case .shared:
            return CollectionRules(read: signedIn, create: signedIn, update: writer, delete: writer)
        case .private:
            let reader = rule(#"{"$or": [{"_acl.creator": "@caller.id"}, {"_acl.read": {"$in": "@caller.principals"}}, {"_acl.write": {"$in": "@caller.principals"}}]}"#)
            return CollectionRules(read: reader, create: signedIn, update: writer, delete: writer)
        case .readonly:
            return CollectionRules(read: signedIn, create: admin, update: admin, delete: admin)
        }
    }
}
