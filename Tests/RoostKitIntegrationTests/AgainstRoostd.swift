import Testing

/// Every test that starts a real roostd runs under this suite, one at a time,
/// so a shared two-core machine is not asked for a dozen daemons at once.
@Suite("RoostKit against a real roostd", .serialized, .timeLimit(.minutes(2)))
struct AgainstRoostd {}
