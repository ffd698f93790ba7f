import Foundation
import JSON
import Store

/// A change as the fan-out reads it for every subscriber: its entity before
/// and after, parsed once; each filter's verdict on them, worked out once
/// however many subscribers share the filter; and its encoded events, made
/// once per kind and view.
final class ParsedChange {
    let change: FeedChange
    let before: JSONValue?
    let afterValue: JSONValue?
    var beforeACL: JSONObject? { before?.objectValue?["_acl"]?.objectValue }
    var after: JSONObject? { afterValue?.objectValue }
    var afterACL: JSONObject? { after?["_acl"]?.objectValue }
    private var verdicts: [String: Bool] = [:]
    private var events: [String: [UInt8]] = [:]

    init(_ change: FeedChange) {
        self.change = change
        before = change.before.flatMap { try? JSONParser.parse($0) }
        afterValue = change.after.flatMap { try? JSONParser.parse($0) }
    }

    /// Whether the entity before (or after) the change matches `filter`, whose JSON text is `key`.
    func matches(_ filter: LiveFilter, key: String, after: Bool) -> Bool {
        let memo = (after ? "a" : "b") + key
        if let known = verdicts[memo] { return known }
        let verdict = after ? filter.matches(afterValue, text: change.after, id: change.id)
                            : filter.matches(before, text: change.before, id: change.id)
        verdicts[memo] = verdict
        return verdict
    }

    func encoded(_ kind: ServerSentEvent.Kind, redacted: Bool, _ make: () -> [UInt8]) -> [UInt8] {
        let key = kind.rawValue + (redacted ? "/redacted" : "")
        if let known = events[key] { return known }
        let bytes = make()
        events[key] = bytes
        return bytes
    }
}

enum ChangeFeedClock {
    static var milliseconds: Int64 { Int64(Date().timeIntervalSince1970 * 1000) }
}
