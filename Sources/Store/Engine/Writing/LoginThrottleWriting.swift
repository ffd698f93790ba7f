/// Log-in throttling: failure counters per key and the addresses a user logged in from.
public protocol LoginThrottleWriting: AnyObject {
    func loginCounter(_ key: String) throws -> (failures: Int64, windowStart: Int64, blockedUntil: Int64)?
    func saveLoginCounter(_ key: String, failures: Int64, windowStart: Int64, blockedUntil: Int64) throws
    func deleteLoginCounter(_ key: String) throws
    func pruneLoginCounters(windowStartBefore: Int64, now: Int64, limit: Int) throws
    func isKnownLoginAddress(userID: String, address: String, since: Int64) throws -> Bool
    func rememberLoginAddress(userID: String, address: String, now: Int64, forgetBefore: Int64) throws
}

extension LoginThrottleWriting {
    public func pruneLoginCounters(windowStartBefore: Int64, now: Int64) throws {
        try pruneLoginCounters(windowStartBefore: windowStartBefore, now: now, limit: 20)
    }
}
