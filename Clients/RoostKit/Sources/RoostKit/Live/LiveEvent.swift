import Foundation

/// A change to a collection, as the live stream reports it.
public struct LiveEvent: Sendable, Hashable {
    /// The event's id: the cursor to resume after it (`Last-Event-ID`).
    public let id: String?
    /// What happened.
    public let kind: Kind
    /// The collection.
    public let collection: String
    /// The document's id (empty for `reset`).
    public let entityID: String
    /// The document after the change; nil for `delete`, `leave` and `reset`.
    public let entity: JSONValue?

    /// The document decoded as `Model`, when the event carries one.
    public func entity<Model: Codable & Sendable>(as type: Model.Type) throws -> Entity<Model>? {
        try entity?.decode(as: Entity<Model>.self)
    }

    /// Kinds of live event. A struct, so kinds a newer server sends arrive rather than fail.
    public struct Kind: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// A document was created.
        public static let create = Kind(rawValue: "create")
        /// A document changed and still matches.
        public static let update = Kind(rawValue: "update")
        /// A document was deleted.
        public static let delete = Kind(rawValue: "delete")
        /// A document changed and now matches the query.
        public static let enter = Kind(rawValue: "enter")
        /// A document changed and no longer matches the query (or became unreadable).
        public static let leave = Kind(rawValue: "leave")
        /// The server cannot resume from the given id: resync, then carry on.
        public static let reset = Kind(rawValue: "reset")
    }

    public init(id: String?, kind: Kind, collection: String, entityID: String, entity: JSONValue?) {
        self.id = id
        self.kind = kind
        self.collection = collection
        self.entityID = entityID
        self.entity = entity
    }

    /// Reads a live event from its SSE form (`data: {"collection","_id","entity"}`).
    init?(_ event: SSEEvent, collection fallback: String) {
        guard !event.event.isEmpty, event.event != "message" || !event.data.isEmpty else { return nil }
        let body = (try? JSONValue.parse(Data(event.data.utf8)))?.objectValue ?? [:]
        self.init(id: event.id, kind: Kind(rawValue: event.event),
                  collection: body["collection"]?.stringValue ?? fallback,
                  entityID: body["_id"]?.stringValue ?? body["entity"]?["_id"]?.stringValue ?? "",
                  entity: body["entity"].flatMap { $0 == .null ? nil : $0 })
    }
}
