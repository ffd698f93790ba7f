/// One registered push device.
public struct PushDevice: Sendable, Equatable {
    public let token: String
    public let userID: String
    public let platform: String

    public init(token: String, userID: String, platform: String) {
        self.token = token
        self.userID = userID
        self.platform = platform
    }
}
