import JSON

/// A webhook endpoint as stored: from the config file or the admin API.
public struct WebhookEndpointRecord: Sendable, Equatable {
    public var name: String
    public var url: String
    /// `whsec_` + base64 of the signing key.
    public var secret: String
    /// Event types, e.g. `message.created`, `messages.updated`; `*` for all.
    public var events: [String]
    /// `standard` or `gorush`.
    public var format: String
    /// `config` or `admin`.
    public var source: String
    /// Set when a 410 (or an operator) disabled the endpoint.
    public var disabledAt: String?
    public var disabledReason: String?

    public init(name: String, url: String, secret: String, events: [String], format: String, source: String,
                disabledAt: String? = nil, disabledReason: String? = nil) {
        self.name = name
        self.url = url
        self.secret = secret
        self.events = events
        self.format = format
        self.source = source
        self.disabledAt = disabledAt
        self.disabledReason = disabledReason
    }

    public var isEnabled: Bool { disabledAt == nil }

    public func wants(_ type: String) -> Bool { isEnabled && (events.contains(type) || events.contains("*")) }
}
