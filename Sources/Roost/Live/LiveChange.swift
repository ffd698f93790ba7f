import EventLoop
import Foundation
import JSON
import Store

/// A change as the fan-out reads it for every subscriber: its entity before
/// and after, parsed once, its collection's access level, and its encoded
/// events, made once per kind and view.
final class ParsedChange {
    let change: FeedChange
    let before: JSONValue?
    let afterValue: JSONValue?
    let level: AccessScope.Level
    /// The collection's configured access rules when the change was read (nil: its level alone).
    let rules: CollectionRules?
    var after: JSONObject? { afterValue?.objectValue }
    /// Encoded events by kind and view (plain, redacted), shared by every subscriber that gets one.
    private var events: [(ServerSentEvent.Kind, Bool, SharedBytes)] = []
    /// Filter steps this change may still take, for all subscribers (`LiveBudget.stepsPerChange`).
    var stepsLeft = LiveBudget.stepsPerChange

    init(_ change: FeedChange, level: AccessScope.Level, rules: CollectionRules?) {
        self.change = change
        self.level = level
        self.rules = rules
        before = change.before.flatMap { try? JSONParser.parse($0) }
        afterValue = change.after.flatMap { try? JSONParser.parse($0) }
    }

    /// Whether a caller with `scope` may read the change's entity before
    /// (`after: false`) or after it: the entity exists then and the
    /// collection's read rule or level (with its `_acl`) lets the caller
    /// read it. The one rule for who learns of a change: live streams and
    /// silent sync pushes both ask it.
    func readable(by scope: AccessScope, after: Bool) -> Bool {
        scope.canRead(after ? self.after : before?.objectValue)
    }

    func encoded(_ kind: ServerSentEvent.Kind, redacted: Bool, _ make: () -> [UInt8]) -> SharedBytes {
        for (k, r, bytes) in events where k == kind && r == redacted { return bytes }
        let bytes = SharedBytes(make())
        events.append((kind, redacted, bytes))
        return bytes
    }
}

enum ChangeFeedClock {
    static var milliseconds: Int64 { Int64(Date().timeIntervalSince1970 * 1000) }
}
