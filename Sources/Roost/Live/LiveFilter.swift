import JSON
import Store

/// A subscription's filter as the fan-out thread evaluates it: in memory by
/// `FilterMatcher`, which has the SQL compiler's semantics, so deciding who
/// sees a change costs no SQL. Only a filter the matcher cannot take falls
/// back to the SQL probe (the compiled filter run on the one bound
/// document); today the matcher takes every filter a subscription accepts.
enum LiveFilter {
    case memory(FilterMatcher)
    case probe(FilterProbe)

    /// The matcher, or the probe when the matcher refuses the filter; nil when neither compiles.
    static func make(_ filter: JSONValue, _ reader: DocumentReader?) -> LiveFilter? {
        if let matcher = try? FilterMatcher(filter) { return .memory(matcher) }
        return (try? reader?.probe(filter)).map(LiveFilter.probe)
    }

    /// Whether a document matches: `value` is it parsed, `text` as stored.
    func matches(_ value: JSONValue?, text: String?, id: String) -> Bool {
        switch self {
        case .memory(let matcher):
            guard let value else { return false }
            return matcher.matches(value)
        case .probe(let probe):
            guard let text else { return false }
            return probe.matches(text, id: id)
        }
    }

    var inMemory: Bool {
        if case .memory = self { return true }
        return false
    }
}
