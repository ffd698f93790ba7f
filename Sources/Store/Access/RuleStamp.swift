import JSON
import Synchronization

/// The parts of a read rule that depend on the document alone, worked out
/// when a row is written and stored with it, so a list tests a bit of the
/// row instead of the document (SQLite's `rs`/`rb` columns; docs/RULES.md).
///
/// A rule is an OR of branches (its top-level `$or`, or the whole rule as
/// one branch), each an AND of conditions. A branch's conditions without
/// variables are its *fixed* part, the others its *rest*:
/// `{"$or": [{"published": true}, {"owner": "@caller.id"}]}` has branches
/// `published: true` (all fixed) and `owner: @caller.id` (all rest). Bit
/// `i` of a row's stamp says whether branch `i`'s fixed part matches the
/// document; a read then tests `bit i AND rest i` per branch. The
/// fingerprint names the fixed parts: a row stamped under another one
/// (written before a rule changed, or by a process without the rule) is
/// judged by the whole rule instead, so a stale stamp can slow a read but
/// never change its answer.
public final class RuleStamp: Sendable {
    /// Names the fixed parts (63 bits, the same in every process).
    public let fingerprint: Int64
    /// Each branch's conditions with variables, as written (nil: none).
    let rests: [JSONValue?]
    /// Each branch's fixed part (nil: none, the bit is always set).
    private let fixed: Mutex<[FilterMatcher?]>

    /// The most branches a stamp holds (one bit each).
    static let maxBranches = 62

    /// The stamp of the read rule `source`, or nil when no branch has a
    /// fixed part (nothing to gain) or it has too many branches.
    init?(_ source: JSONValue) {
        guard case .object(let rule) = source else { return nil }
        let branches: [JSONObject]
        if rule.count == 1, case .array(let items)? = rule["$or"] {
            let objects = items.compactMap(\.objectValue)
            guard objects.count == items.count, !objects.isEmpty, objects.count <= Self.maxBranches else { return nil }
            branches = objects
        } else {
            branches = [rule]
        }
        var fixedParts: [JSONObject?] = []
        var rests: [JSONValue?] = []
        for branch in branches {
            var fixed = JSONObject()
            var rest = JSONObject()
            for (key, value) in branch {
                if key.hasPrefix("@") || Self.hasVariable(value) { rest[key] = value } else { fixed[key] = value }
            }
            fixedParts.append(fixed.isEmpty ? nil : fixed)
            rests.append(rest.isEmpty ? nil : .object(rest))
        }
        guard fixedParts.contains(where: { $0 != nil }) else { return nil }
        var matchers: [FilterMatcher?] = []
        for part in fixedParts {
            guard let part else { matchers.append(nil); continue }
            // `@@…` literals only: substitution for any caller gives the same filter.
            let literal = AccessRule.substitute(.object(part), caller: .anonymous, previous: nil, now: "")
            guard let filter = try? Filter(literal), let matcher = try? FilterMatcher(filter) else { return nil }
            matchers.append(matcher)
        }
        let text = "stamp-v1\n" + fixedParts.map { $0.map { JSONValue.object($0).jsonText } ?? "-" }.joined(separator: "\n")
        fingerprint = Int64(bitPattern: Digest.fnv1a64(text) & 0x7fff_ffff_ffff_ffff)
        self.rests = rests
        fixed = Mutex(matchers)
    }

    /// The row's bits: bit `i` set when branch `i`'s fixed part matches `document`.
    public func bits(of document: JSONObject) -> Int64 {
        fixed.withLock { matchers in
            var bits: Int64 = 0
            for (i, matcher) in matchers.enumerated() where matcher?.matches(.object(document)) ?? true {
                bits |= 1 << Int64(i)
            }
            return bits
        }
    }

    /// The branches for `caller`: each one's bit mask and its rest as a
    /// filter (nil: none). A branch whose conditions on the caller fail is left out.
    func resolve(for caller: RuleCaller, now: String) -> StampedRule? {
        var branches: [StampedRule.Branch] = []
        for (i, rest) in rests.enumerated() {
            let mask: Int64 = 1 << Int64(i)
            guard let rest else { branches.append(.init(mask: mask, rest: nil)); continue }
            guard let filter = try? Filter(AccessRule.substitute(rest, caller: caller, previous: nil, now: now)) else { return nil }
            if filter.matchesNothing { continue }
            branches.append(.init(mask: mask, rest: filter.matchesAll ? nil : filter))
        }
        return StampedRule(fingerprint: fingerprint, branches: branches)
    }

    /// Whether `value` holds a variable anywhere (a string or member name starting with one `@`).
    static func hasVariable(_ value: JSONValue) -> Bool {
        switch value {
        case .string(let s): return s.hasPrefix("@") && !s.hasPrefix("@@")
        case .array(let items): return items.contains(where: hasVariable)
        case .object(let object): return object.contains { $0.key.hasPrefix("@") || hasVariable($0.value) }
        default: return false
        }
    }
}

/// A stamped read rule resolved for one caller (`RuleStamp.resolve`): rows
/// stamped under `fingerprint` pass when, for some branch, a bit of `mask`
/// is set and `rest` matches.
public struct StampedRule: Sendable {
    public struct Branch: Sendable {
        public let mask: Int64
        public let rest: Filter?
    }
    public let fingerprint: Int64
    public let branches: [Branch]
}
