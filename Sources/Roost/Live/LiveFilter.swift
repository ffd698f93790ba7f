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
    /// Steps its last evaluation took: the fan-out runs cheap filters first.
    private(set) var lastSteps = 0
    private var memoSeq: Int64 = -1
    private var memo: (before: Verdict?, after: Verdict?) = (nil, nil)

    /// A filter's answer on one state of an entity.
    enum Verdict { case match, noMatch, overBudget }

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
    /// Charged to the change's budget: at most `LiveBudget.stepsPerFilter`,
    /// and no more than the change has left (but `LiveBudget.stepsWhenSpent`
    /// even when it has nothing left); past that, `.overBudget`.
    func verdict(_ change: ParsedChange, after: Bool) -> Verdict {
        if matchesAll { return .match }
        if memoSeq != change.change.seq { memoSeq = change.change.seq; memo = (nil, nil) }
        if let known = after ? memo.after : memo.before { return known }
        let verdict: Verdict
        switch engine {
        case .memory(let matcher):
            if let document = after ? change.afterValue : change.before {
                let allowance = max(min(LiveBudget.stepsPerFilter, change.stepsLeft), LiveBudget.stepsWhenSpent)
                let (answer, steps) = matcher.evaluate(document, allowance: allowance)
                change.stepsLeft -= min(steps, allowance)
                lastSteps = answer == nil ? LiveBudget.stepsPerFilter : steps
                verdict = answer.map { $0 ? .match : .noMatch } ?? .overBudget
            } else {
                verdict = .noMatch
            }
        case .probe(let probe):
            let matched = (after ? change.change.after : change.change.before).map { probe.matches($0, id: change.change.id) } ?? false
            verdict = matched ? .match : .noMatch
        }
        if after { memo.after = verdict } else { memo.before = verdict }
        return verdict
    }
}
