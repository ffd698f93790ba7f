import JSON

/// What a before hook sees and may change: the entity about to be written,
/// inside the request's unit of work (`work`, e.g. the writer's transaction).
///
/// A reference type, so a change made by one hook is seen by the next and by
/// the write itself. For a merge-patch update `entity` is the patch; for a
/// delete it is the stored document.
public final class WriteContext<Work> {
    public let event: HookEvent
    public let collection: String
    /// The entity's `_id` when the URL names it (update, delete).
    public let id: String?
    /// Who is writing: an opaque principal id, nil when anonymous.
    public let actor: String?
    /// The actor's role names, for work done with their rights.
    public let actorRoles: [String]
    /// True for an operator credential that bypasses access rules.
    public let privileged: Bool
    public let requestID: String
    /// The request's unit of work; valid only while the hook runs.
    public let work: Work
    /// The entity (or patch) to write; hooks may change it.
    public var entity: JSONObject
    /// True when `entity` is a merge patch rather than a whole entity.
    public let isPatch: Bool
    /// The entity as stored before this update, read after the caller's
    /// access was checked; nil for a create.
    public let previous: JSONObject?
    /// The stored entity's JSON text, set by the write.
    public var storedText: String? { didSet { storedCache = nil } }
    private var storedCache: JSONObject?

    /// The stored entity, once the rest of the chain (and the write) ran.
    /// Parsed from `storedText` only when a hook asks for it.
    public var stored: JSONObject? {
        get {
            if storedCache == nil, let text = storedText, case .object(let o)? = try? JSONParser.parse(text) { storedCache = o }
            return storedCache
        }
        set { storedCache = newValue }
    }

    /// The stored entity as JSON text, without parsing it when no hook did.
    public var storedJSON: String? { storedCache.map(\.jsonText) ?? storedText }

    public init(event: HookEvent, collection: String, id: String?, actor: String?, actorRoles: [String] = [], privileged: Bool,
                requestID: String, work: Work, entity: JSONObject, isPatch: Bool = false, previous: JSONObject? = nil) {
        self.previous = previous
        self.actorRoles = actorRoles
        self.event = event
        self.collection = collection
        self.id = id
        self.actor = actor
        self.privileged = privileged
        self.requestID = requestID
        self.work = work
        self.entity = entity
        self.isPatch = isPatch
    }
}

/// What an after hook sees: the committed entity. After hooks run on a
/// queue after COMMIT and cannot change the outcome of the request.
public struct AfterContext: Sendable {
    public let event: HookEvent
    public let collection: String
    public let actor: String?
    /// The actor's role names, for work done with their rights.
    public let actorRoles: [String]
    public let requestID: String
    /// The stored entity (for a delete: the entity as it was).
    public let entity: JSONObject

    public init(event: HookEvent, collection: String, actor: String?, actorRoles: [String] = [], requestID: String, entity: JSONObject) {
        self.event = event
        self.collection = collection
        self.actor = actor
        self.actorRoles = actorRoles
        self.requestID = requestID
        self.entity = entity
    }
}
