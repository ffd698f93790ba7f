/// A compiled filter run on one document at a time, by the engine's own
/// evaluation (`DocumentReading.probe`). Used on the thread of the reader that made it.
public final class FilterProbe {
    /// Runs the compiled filter on one document (text, `_id`, time limit in seconds).
    let evaluate: (String, String, Double) throws -> Bool
    /// `{}`: every document matches, no evaluation needed.
    public let matchesAll: Bool

    /// A probe run by another engine: `evaluate` gets the document's text, its `_id` and the time limit.
    public init(matchesAll: Bool, evaluate: @escaping (_ text: String, _ id: String, _ timeLimit: Double) throws -> Bool) {
        self.matchesAll = matchesAll
        self.evaluate = evaluate
    }

    /// Whether the document `text` (with `_id` `id`) matches. A filter that
    /// fails on it (a regex past its limits, or past `timeLimit` seconds) does
    /// not match. The limit is short: one bad filter must not hold the live
    /// fan-out thread.
    public func matches(_ text: String, id: String, timeLimit: Double = 0.01) -> Bool {
        if matchesAll { return true }
        return (try? evaluate(text, id, timeLimit)) ?? false
    }
}
