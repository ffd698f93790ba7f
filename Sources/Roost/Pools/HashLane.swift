/// The hash pool's priority lanes. A hash thread always takes the first
/// lane's jobs before the second's, each lane has its own queue slots, and
/// a job's expected wait counts only the jobs ahead of it: so a flood of
/// sign-ups fills (and is refused from) its own lane, while a log-in waits at
/// most for the hashes already running.
enum HashLane: Int, CaseIterable {
    /// Checking an existing account's password: log-in, a password change
    /// (its `oldPassword` and new hash), an admin's password reset.
    case credentials = 0
    /// Hashing a new account's password.
    case signUp = 1
}
