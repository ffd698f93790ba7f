/// A unit of work that may, while a hook runs, do work that is not the
/// hook's: the PostgreSQL writer sends creates it held for earlier writes of
/// the batch with the hook's first statement. The registry leaves that time
/// out of the hook's budget, as it leaves out the rest of the chain.
public protocol WorkOnOthersBehalf {
    /// Time spent so far on others' behalf (it only grows).
    var timeOnOthersBehalf: Duration { get }
}
