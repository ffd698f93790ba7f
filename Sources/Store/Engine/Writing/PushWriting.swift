/// Push devices and the push outbox.
public protocol PushWriting: AnyObject {
    func registerDevice(token: String, userID: String, platform: String) throws -> Bool
    func unregisterDevice(token: String, userID: String?) throws -> Bool
    func devices(userIDs: [String]) throws -> [PushDevice]
    func deleteDevices(userID: String) throws
    func registerDevice(token: String, userID: String, platform: String, environment: String?, sync: Bool) throws -> Bool
    func enqueuePush(userID: String, kind: String, payload: String, collapseID: String?, audience: PushAudience) throws -> Int
    func recordPushAttempts(_ records: [PushAttemptRecord]) throws -> [(token: String, reason: String)]
    func expireStaleDevices(seenBefore cutoff: String) throws -> [String]
    func pruneFinishedPushes(alertsBefore: String, backgroundBefore: String, limit: Int) throws -> Int
}
