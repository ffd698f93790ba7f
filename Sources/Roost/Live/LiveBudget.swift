import Store

/// What live matching and delivery may cost, so that no subscriber's filter
/// and no client that stops reading can hold up the others or the memory
/// (docs/SYNC.md, "Live updates"). Steps are counted by `FilterMatcher.Meter`: a
/// test on a value, a filter node, an array element walked, more for
/// containers and regex subjects by size; a `$in` list is a hash lookup.
enum LiveBudget {
    /// Steps one filter may take on one state of an entity (before or after a change).
    static let stepsPerFilter = 100_000
    /// Steps all filters together may take on one change. Cheap filters go
    /// first, so the ones that run out are the costly ones.
    static let stepsPerChange = 250_000
    /// Steps each filter still gets on a change whose budget is spent: enough
    /// for a handful of conditions on plain fields, so a cheap filter is never
    /// refused because costly ones went before it.
    static let stepsWhenSpent = 128
    /// Conditions in all of one stream's queries together (a list query may have as many).
    static let maxConditionsPerStream = QueryLimits.maxConditions
    /// A stream that waits for room (its client holds `live_buffer_bytes`
    /// unsent) is dropped when the client has taken nothing for this long.
    static let stallMilliseconds: Int64 = 2_000
    /// A round hands the loops what it has built at least this often (seconds).
    static let flushInterval = 0.01
    /// Streams a loop writes before it looks at its sockets again: a request
    /// that comes during a big round waits for one slice, not for the round.
    static let streamsPerTurn = 16
    /// The longest a round waits for the loops to finish writing the last
    /// one and rest after it (seconds), gathering the commits made meanwhile.
    static let longestGather = 0.05
    /// After the loops wrote a round, the next waits this many times as long
    /// as that took: with many streams, the fan-out leaves the loops (and the
    /// cores) to the requests that make the next commits most of the time,
    /// and each round carries the commits of that time to every stream in
    /// one write. With few streams the rest is microseconds.
    static let restPerWrite = 2.0
    /// The longest rest (seconds): what it adds to an event's way out.
    static let longestRest = 0.02
}
