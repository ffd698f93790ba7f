import JSON
import Store

/// A subscription's filter as the fan-out thread evaluates it: in memory by
/// `FilterMatcher`, which has the SQL compiler's semantics, so deciding who
/// sees a change costs no SQL. Only a filter the matcher cannot take falls
/// back to the SQL probe (the compiled filter run on the one bound
/// document); today the matcher takes every filter a subscription accepts.
///
/// One object per distinct filter text, shared by its subscribers, holding
/// its verdicts on the change being fanned out: however many subscribers
/// share a filter, it runs once per entity state. Hub thread only.
final class LiveFilter {
    enum Engine {
        case memory(FilterMatcher)
        case probe(FilterProbe)
    }

    let engine: Engine
    let matchesAll: Bool
    private var memoSeq: Int64 = -1
    private var memo: (before: Bool?, after: Bool?) = (nil, nil)

    init(_ engine: Engine) {
        self.engine = engine
        switch engine {
        case .memory(let m): matchesAll = m.matchesAll
        case .probe(let p): matchesAll = p.matchesAll
        }
    }

    /// The matcher, or the probe when the matcher refuses the filter; nil when neither compiles.
    static func make(_ filter: JSONValue, _ reader: (any DocumentReading)?) -> LiveFilter? {
        if let matcher = try? FilterMatcher(filter) { return LiveFilter(.memory(matcher)) }
        return (try? reader?.probe(filter)).map { LiveFilter(.probe($0)) }
    }

    var inMemory: Bool {
        if case .memory = engine { return true }
        return false
    }

    /// Whether the entity before (or after) `change` matches; it must exist.
    func matches(_ change: ParsedChange, after: Bool) -> Bool {
        if matchesAll { return true }
        if memoSeq != change.change.seq { memoSeq = change.change.seq; memo = (nil, nil) }
        if let known = after ? memo.after : memo.before { return known }
        let verdict: Bool
        switch engine {
        case .memory(let matcher):
            verdict = (after ? change.afterValue : change.before).map(matcher.matches) ?? false
        case .probe(let probe):
            verdict = (after ? change.change.after : change.change.before).map { probe.matches($0, id: change.change.id) } ?? false
        }
        if after { memo.after = verdict } else { memo.before = verdict }
        return verdict
    }
}
