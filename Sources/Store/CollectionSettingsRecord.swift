/// A collection set up at run time (`/admin/collections`, docs/COLLECTIONS.md):
/// its settings as JSON text in the shape of a `collections:` entry of the
/// config, stored in the database so every node sharing it reads the same.
/// A dropped collection keeps its row with no settings, so the highest
/// `version` only ever grows and a node that polls it sees every change.
public struct CollectionSettingsRecord: Sendable, Equatable {
    public let name: String
    /// A JSON object (`permission`, `indexes`, `references`, `rules`, `schema`); nil once dropped.
    public let settings: String?
    /// Grows with every change to any collection's settings.
    public let version: Int64
    public let updatedAt: String

    public init(name: String, settings: String?, version: Int64, updatedAt: String) {
        self.name = name
        self.settings = settings
        self.version = version
        self.updatedAt = updatedAt
    }
}
