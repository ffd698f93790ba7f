/// When a hook runs: before or after a create, update or delete, or after a
/// log-in. A struct wrapping an enum, so the set can grow without breaking
/// callers that switch over it.
public struct HookEvent: Hashable, Sendable, CustomStringConvertible {
    enum Kind: String, Sendable, CaseIterable {
        case beforeCreate, beforeUpdate, beforeDelete
        case afterCreate, afterUpdate, afterDelete
        case afterLogin
    }

    let kind: Kind

    public static let beforeCreate = HookEvent(kind: .beforeCreate)
    public static let beforeUpdate = HookEvent(kind: .beforeUpdate)
    public static let beforeDelete = HookEvent(kind: .beforeDelete)
    public static let afterCreate = HookEvent(kind: .afterCreate)
    public static let afterUpdate = HookEvent(kind: .afterUpdate)
    public static let afterDelete = HookEvent(kind: .afterDelete)
    public static let afterLogin = HookEvent(kind: .afterLogin)

    /// Every event, in listing order.
    public static let all: [HookEvent] = Kind.allCases.map(HookEvent.init(kind:))

    /// Before hooks run inside the request's unit of work and may refuse it.
    public var isBefore: Bool {
        switch kind {
        case .beforeCreate, .beforeUpdate, .beforeDelete: return true
        default: return false
        }
    }

    /// The after event that follows a successful before event's write.
    public var after: HookEvent? {
        switch kind {
        case .beforeCreate: return .afterCreate
        case .beforeUpdate: return .afterUpdate
        case .beforeDelete: return .afterDelete
        default: return nil
        }
    }

    /// The verb of the write ("created", "updated", "deleted"), for event names such as `messages.created`.
    public var pastTense: String? {
        switch kind {
        case .beforeCreate, .afterCreate: return "created"
        case .beforeUpdate, .afterUpdate: return "updated"
        case .beforeDelete, .afterDelete: return "deleted"
        case .afterLogin: return nil
        }
    }

    public var description: String { kind.rawValue }

    /// Parses `beforeCreate`, `afterLogin`, …
    public init?(name: String) {
        guard let kind = Kind(rawValue: name) else { return nil }
        self.kind = kind
    }

    init(kind: Kind) { self.kind = kind }
}
