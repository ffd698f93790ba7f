import Store

/// Transactions and savepoints whose opening waits for the first statement
/// that needs a result, so BEGIN, SAVEPOINT and RELEASE cost no exchange of
/// their own: a batch of creates is one exchange per create plus one at the end.
///
/// A savepoint that was never sent needs no ROLLBACK TO (it and what was
/// queued inside it are dropped); a transaction that sent nothing needs no
/// COMMIT. The depth drops only after COMMIT ran, so a connection lost
/// inside a transaction the server saw fails everything up to and including
/// its COMMIT (see `live`): work done before the loss is never reported as committed.
extension PGConnection {
    /// Runs `body` in a transaction (a savepoint when one is already open):
    /// committed when it returns, rolled back when it throws.
    /// - Parameters:
    ///   - begin: the statement that opens an outermost transaction
    ///     (e.g. `BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY`).
    ///   - waitForCommit: false only for a read-only transaction: its COMMIT
    ///     is sent and its answer read before the next statement, not waited
    ///     for (a read-only COMMIT changes nothing: the answers read stand).
    public func transaction<T>(begin: String = "BEGIN", waitForCommit: Bool = true, _ body: () throws -> T) throws -> T {
        try beforeStatement?(true)
        let level = frames.count
        frames.append(deferred.count)
        deferred.append(.text(level == 0 ? begin : "SAVEPOINT s\(level)", []))
        defer { frames.removeLast() }
        let value: T
        do {
            value = try body()
        } catch {
            abandon(level)
            throw error
        }
        do {
            try finish(level, wait: waitForCommit)
        } catch {
            abandon(level)
            throw error
        }
        return value
    }

    /// Queues a statement whose result is not needed (e.g. `set_config`): it
    /// is sent with the next statement that needs a result, and its error
    /// surfaces there. Inside a savepoint that is rolled back unsent, it is dropped.
    public func runDeferred(_ sql: String, _ params: [SQLValue] = []) {
        deferred.append(.text(sql, params))
    }

    /// Runs `body` as if the transaction at `level` and those inside it had
    /// not begun, while its opening is unsent: what `body` sends goes before
    /// it, so rolling that transaction back later keeps it.
    func outside<T>(level: Int, _ body: () throws -> T) throws -> T {
        guard frames.indices.contains(level) else { return try body() }
        guard let opener = frames[level] else {
            throw PGError(sqlState: "XX000", message: "internal: statements cannot go outside a transaction the server has seen")
        }
        let inner = deferred[opener...].map { $0 }
        let openers = frames[level...].map { $0.map { $0 - opener } }
        deferred.removeSubrange(opener...)
        frames.removeSubrange(level...)
        defer {
            let base = deferred.count
            deferred += inner
            frames += openers.map { $0.map { $0 + base } }
        }
        return try body()
    }

    /// How many transactions are open (1: a batch; 2: an operation's savepoint inside it).
    var depth: Int { frames.count }

    /// True while the transaction at `level` is open and its opening still unsent (nothing in it reached the server).
    func isUnsent(level: Int) -> Bool {
        frames.indices.contains(level) && frames[level] != nil
    }

    /// Queues the open transaction's time limit (`statement_timeout`, local
    /// to it): at least 1 ms, since 0 would mean none; a limit that is not a
    /// finite number of seconds is taken as one hour.
    public func deferTimeLimit(seconds: Double) {
        let milliseconds = seconds.isFinite ? max(1, min(seconds * 1000, 3_600_000)) : 3_600_000
        runDeferred("SELECT set_config('statement_timeout', $1::text, true)", [.text("\(Int(milliseconds))")])
    }

    /// True when the outermost transaction's BEGIN reached the server.
    var transactionSent: Bool {
        guard let outer = frames.first else { return false }
        return outer == nil
    }

    /// COMMIT or RELEASE for the transaction at `level`.
    private func finish(_ level: Int, wait: Bool) throws {
        if let opener = frames[level] {
            // Never sent: nothing to end. An unsent BEGIN drops what followed it too.
            if level == 0 { deferred.removeSubrange(opener...) } else { deferred.remove(at: opener) }
            return
        }
        if level == 0 {
            try wait ? command("COMMIT") : commandWithoutWaiting("COMMIT")
        } else {
            deferred.append(.text("RELEASE SAVEPOINT s\(level)", []))
        }
    }

    /// ROLLBACK (now) or ROLLBACK TO (deferred) for the transaction at `level`.
    private func abandon(_ level: Int) {
        if let opener = frames[level] {
            deferred.removeSubrange(opener...)
            return
        }
        if level == 0 {
            deferred.removeAll()
            try? command("ROLLBACK")
        } else {
            // ROLLBACK TO keeps the savepoint: release it too, so failed
            // operations do not pile savepoints up until COMMIT.
            deferred.append(.text("ROLLBACK TO SAVEPOINT s\(level)", []))
            deferred.append(.text("RELEASE SAVEPOINT s\(level)", []))
        }
    }
}
