import Foundation

/// A member's record as the server shows it to the caller: `_id`,
/// `username`, timestamps, and every profile field (private fields such as
/// `email` only in your own record).
///
/// ```swift
/// struct Profile: Codable { var firstName: String?; var title: String? }
/// let me = try await roost.currentUser()
/// let profile = try me.profile(as: Profile.self)
/// ```
public struct RoostUser: Codable, Sendable, Hashable, Identifiable {
    /// The server-made user id.
    public let id: String
    /// The log-in name; empty for a guest (``isGuest``), which has none until
    /// ``RoostClient/upgradeGuest(username:email:password:)``.
    public let username: String
    /// Every field of the record, `_id` and `username` included.
    public let fields: [String: JSONValue]

    /// A guest account (``RoostClient/signInAsGuest()``): `anonymous: true` in its record.
    public var isGuest: Bool { fields["anonymous"] == .bool(true) }

    /// Decodes the profile fields as `Profile`.
    public func profile<Profile: Decodable>(as type: Profile.Type = Profile.self) throws -> Profile {
        try JSONValue.object(fields).decode(as: Profile.self)
    }

    public init(from decoder: Decoder) throws {
        let object = try [String: JSONValue](from: decoder)
        guard let id = object["_id"]?.stringValue else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "a user needs an _id"))
        }
        self.id = id
        self.username = object["username"]?.stringValue ?? ""
        self.fields = object
    }

    public func encode(to encoder: Encoder) throws { try fields.encode(to: encoder) }
}

/// A signed-in session: the bearer token, when it expires, and whose it is.
public struct RoostSession: Codable, Sendable, Hashable {
    /// The bearer token (256 random bits; keep it secret).
    public let token: String
    /// When the token expires unless used (each use renews it).
    public let expiresAt: String
    /// The signed-in user.
    public let user: RoostUser
}
