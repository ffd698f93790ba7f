/// The hash pool's priority lanes. A hash thread always takes the first
/// lane's jobs before the second's, each lane has its own queue slots, and
/// a job's expected wait counts only the jobs ahead of it; with two threads
/// or more, one of them is kept for the first lane: it hashes nothing else,
/// gets a log-in first when it is free, and runs at the daemon's own
/// priority (the others at nice 10). So a flood of sign-ups fills (and is
/// refused from) its own lane and never holds every thread, and a log-in
/// waits for no sign-up's hash, nor behind the flood's requests for CPU.
enum HashLane: Int, CaseIterable {
    /// Checking an existing account's password: log-in, a password change
    /// (its `oldPassword` and new hash), an admin's password reset.
    case credentials = 0
    /// Hashing a new account's password.
    case signUp = 1

    /// Hash threads kept for `credentials` out of `threads`: one when there
    /// are two or more (sign-ups may hold all but one), else none.
    static func reservedThreads(of threads: Int) -> Int {
        threads >= 2 ? 1 : 0
    }
}
