import JSON

/// How `_changes.prev_doc` keeps the entity as it was before a change, for
/// both engines, at about the cost of what changed.
///
/// - a create keeps nothing (NULL); a delete keeps the whole entity (its tombstone);
/// - an update of a small entity keeps its whole JSON text, as stored;
/// - an update of a larger one keeps, when that is much smaller, a *reverse
///   merge patch* (RFC 7396) marked by a leading `~`: applied to the entity
///   as the change left it, it gives back the entity before it, byte for
///   byte (checked when written; otherwise the whole text is kept).
///
/// A state is rebuilt walking backwards from the row as it is now, which
/// every reader of the feed already does (`FeedChange.withAfterStates`), so
/// compaction, which removes the oldest rows, never breaks a chain.
public enum FeedPrevious {
    /// Entities smaller than this keep their whole text: a patch saves little.
    public static let patchThreshold = 2048
    static let marker: UInt8 = UInt8(ascii: "~")

    /// True when `stored` is a reverse patch, not a whole entity.
    public static func isPatch(_ stored: String?) -> Bool {
        stored?.utf8.first == marker
    }

    /// What an update keeps of `before` (as stored) now that it became `after`.
    public static func stored(before: StoredRow, after: JSONObject) -> String {
        let text = before.text
        guard text.utf8.count >= patchThreshold,
              let patch = reversePatch(from: after, to: before.document) else { return text }
        let patchText = JSONValue.object(patch).jsonText
        guard patchText.utf8.count * 4 <= text.utf8.count,
              case .object(let rebuilt) = JSONValue.object(after).mergePatched(with: .object(patch)) else { return text }
        // Checked on the parsed entity (members in order): the stored text is
        // this writer's own serialisation of it, so the text comes back too.
        if rebuilt == before.document { return "~" + patchText }
        // Members the patch put back went last: keep the top-level order too.
        let order = before.document.keys
        let keyed = JSONValue.array([.object(patch), .array(order.map { .string($0) })]).jsonText
        guard keyed.utf8.count * 4 <= text.utf8.count, reordered(rebuilt, order) == before.document else { return text }
        return "~" + keyed
    }

    /// `object`'s members in the order of `keys` (members not named there follow).
    static func reordered(_ object: JSONObject, _ keys: [String]) -> JSONObject {
        var out = JSONObject()
        for key in keys { if let value = object[key] { out[key] = value } }
        for (key, value) in object where out[key] == nil { out[key] = value }
        return out
    }

    /// The entity before a change, from what the feed kept (`stored`) and
    /// the entity as the change left it (`after`). Nil for a create, or a
    /// patch with nothing to apply it to (never written so).
    public static func before(_ stored: String?, after: String?) -> String? {
        before(stored, after: State(text: after)).text
    }

    /// A state as text, with its parsed form once one was needed: walking
    /// back over many patches of one large entity parses it once.
    public struct State {
        public var text: String?
        var value: JSONValue?
        public init(text: String?) { self.text = text }
    }

    /// `before(_:after:)` on states.
    public static func before(_ stored: String?, after: State) -> State {
        guard let stored, isPatch(stored) else { return State(text: stored) }
        guard let value = after.value ?? after.text.flatMap({ try? JSONParser.parse($0.utf8) }),
              let patch = try? JSONParser.parse(stored.utf8.dropFirst()) else { return State(text: nil) }
        var rebuilt: JSONValue
        // `[patch, top-level keys in order]` when the order had to be kept.
        if case .array(let parts) = patch, parts.count == 2, case .object(let object) = value.mergePatched(with: parts[0]) {
            rebuilt = .object(reordered(object, parts[1].arrayValue?.compactMap(\.stringValue) ?? []))
        } else {
            rebuilt = value.mergePatched(with: patch)
        }
        var state = State(text: rebuilt.jsonText)
        state.value = rebuilt
        return state
    }

    /// The states before each of one entity's changes, given what the feed
    /// kept for each (in feed order) and the entity after the last of them
    /// (the row now, or nil when the last was a delete).
    public static func befores(_ stored: [String?], final: String?) -> [String?] {
        var after = State(text: final)
        var out = [String?](repeating: nil, count: stored.count)
        for index in stored.indices.reversed() {
            after = before(stored[index], after: after)
            out[index] = after.text
        }
        return out
    }

    /// `states` (id, what the feed kept, in feed order: every change of each
    /// id up to the snapshot's head) with each reverse patch made whole,
    /// rebuilt from the id's later states and its row now (`current`, asked
    /// once, only for ids that have a patch).
    public static func whole(_ states: [(String, String?)], current: ([String]) throws -> [String: String]) rethrows -> [(String, String?)] {
        let patched = Set(states.lazy.filter { isPatch($0.1) }.map(\.0))
        guard !patched.isEmpty else { return states }
        let now = try current(Array(patched))
        var out = states
        for id in patched {
            let indices = states.indices.filter { states[$0].0 == id }
            let rebuilt = befores(indices.map { states[$0].1 }, final: now[id])
            for (index, state) in zip(indices, rebuilt) { out[index].1 = state }
        }
        return out
    }

    /// A merge patch turning `after` into `before`, or nil when merge
    /// patches cannot say it (a `null` member to restore).
    static func reversePatch(from after: JSONObject, to before: JSONObject) -> JSONObject? {
        var patch = JSONObject()
        for (key, old) in before {
            let new = after[key]
            if new == old { continue }
            if case .object(let oldObject) = old, case .object(let newObject)? = new {
                guard let inner = reversePatch(from: newObject, to: oldObject) else { return nil }
                patch[key] = .object(inner)
            } else {
                guard !containsNull(old) else { return nil }
                patch[key] = old
            }
        }
        for (key, _) in after where before[key] == nil { patch[key] = .null }
        return patch
    }

    private static func containsNull(_ value: JSONValue) -> Bool {
        switch value {
        case .null: return true
        case .object(let o): return o.contains { containsNull($0.value) }
        default: return false
        }
    }
}
