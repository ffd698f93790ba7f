import Foundation
import Store

/// A create held back in memory until the writer's next statement or the
/// batch's end (`PostgresDocumentWriter+HeldInserts`).
struct HeldInsert {
    /// The batch operation that made it.
    let operation: Int
    /// Its part of that operation (`holdWrites`), or -1.
    var part = -1
    let table: String
    let collection: String
    let id: String
    let now: String
    let text: String
}

/// Creates sent many rows to a statement.
///
/// PostgreSQL prepares a table's index expressions afresh for every
/// statement, and a savepoint costs two statements more, so a batch of
/// one-row INSERTs spent most of the writer's time outside the rows
/// themselves. An operation that has sent nothing yet (its savepoint
/// unsent) therefore holds its create back instead of sending it. Held rows
/// go out as one `INSERT … VALUES (…), (…) ON CONFLICT (id) DO NOTHING
/// RETURNING id` per table, at the batch's end or just before the next
/// statement issued on the connection (`PGConnection.beforeStatement`), so
/// every later statement sees them: each operation's outcome is the one it
/// would have had with its row sent at once.
///
/// - Rows of finished operations go in a savepoint of their own, outside
///   the running operation's (so its rollback keeps them).
/// - The running operation's row goes in a savepoint nested in its own; an
///   error there is kept and thrown when the operation ends, not from
///   whatever statement (a hook's) happened to send it.
/// - A row refused (a taken `_id`, a value too large for an index) fails its
///   own operation alone: a taken id is seen in `RETURNING`; any other error
///   sends the rows again one at a time. A finished operation sent nothing
///   but that row, so its change row is dropped and its result becomes the
///   error. A lost connection fails the batch.
extension PostgresDocumentWriter {
    /// True when `insert` may hold its row: inside a batch's operation (not
    /// a nested savepoint) that has sent nothing and holds no row yet.
    /// An operation made of parts (`holdWrites`) holds each part's creates
    /// even after it sent statements (its rows always go in a savepoint
    /// nested in its own, before its next statement): a `/_batch` of creates
    /// sends them as one statement.
    var mayHoldInsert: Bool {
        guard operation >= 0, db.depth == 2 else { return false }
        return part >= 0 || db.isUnsent(level: 1) && !held.contains { $0.operation == operation }
    }

    /// The writes that follow are part `part` of the running operation (`WriterConnection.holdWrites`).
    public func holdWrites(part: Int) {
        guard operation >= 0 else { return }
        self.part = part
    }

    /// Sends held rows before a statement: all of them, or (when a savepoint
    /// opens) only the running operation's; the others may wait, since they
    /// go outside its savepoint anyway.
    func sendHeldInserts(opensTransaction: Bool) throws {
        guard !held.isEmpty else { return }
        let started = ContinuousClock.now
        defer { heldSendingTime += ContinuousClock.now - started }
        let isMine = { [operation] (row: HeldInsert) in operation >= 0 && row.operation == operation }
        let mine = held.filter(isMine)
        let finished = held.filter { !isMine($0) }
        held = opensTransaction ? finished : []
        if !opensTransaction, !finished.isEmpty {
            do {
                if operation >= 0 { try db.outside(level: 1) { try insert(finished) } } else { try insert(finished) }
            } catch {
                // Finished operations counted on these rows: nothing of the batch may commit without them.
                heldRowsLost = Self.wrap(error)
                throw error
            }
        }
        if !mine.isEmpty { try insert(mine) }
    }

    /// Sends what is held now; throws the running operation's own held
    /// create's refusal (once: the caller reports it as it sees fit, e.g.
    /// `/_batch` as its sub-operation's failure).
    /// In a failed transaction (the caller settles after an error) nothing
    /// is sent: only refusals already met are thrown.
    public func settleHeldWrite() throws {
        if !db.transactionFailed { try sendHeldInserts(opensTransaction: false) }
        if operation >= 0, let refused = heldFailures.removeValue(forKey: operation) { throw refused }
    }

    /// Inserts `rows` in a savepoint: many to a statement, or one at a time
    /// when a statement fails, so only the refused rows' operations fail.
    private func insert(_ rows: [HeldInsert]) throws {
        var taken: [HeldInsert] = []
        do {
            try db.transaction {
                taken = []
                for chunk in Self.statements(rows) {
                    // Not prepared: each row count is its own statement text.
                    let stored = Set(try db.query(chunk.sql, chunk.params, prepared: false) { Array(($0.text(0) ?? "").utf8) })
                    taken += chunk.rows.filter { !stored.contains(Array($0.id.utf8)) }
                }
            }
        } catch let error as PGError where !error.isConnectionLost {
            taken = []
            for row in rows {
                do {
                    let single = Self.statements([row])[0]
                    let inserted = try db.transaction { try db.query(single.sql, single.params, prepared: false) { _ in true }.first }
                    if inserted == nil { taken.append(row) }
                } catch let refused as PGError where !refused.isConnectionLost {
                    failHeld(row, refused.storeError)
                }
            }
        }
        for row in taken { failHeld(row, Self.taken(row.id, in: row.collection)) }
    }

    /// Rows per statement at most (3 parameters each, of 65,535).
    static let rowsPerStatement = 1000
    /// Document bytes per statement at most, far below PostgreSQL's 1 GB message.
    static let bytesPerStatement = 16 << 20

    /// One multi-row INSERT per table and chunk (`rowsPerStatement`, `bytesPerStatement`), in the order held.
    private static func statements(_ rows: [HeldInsert]) -> [(sql: String, params: [SQLValue], rows: [HeldInsert])] {
        var tables: [String] = []
        var byTable: [String: [HeldInsert]] = [:]
        for row in rows {
            if byTable[row.table] == nil { tables.append(row.table) }
            byTable[row.table, default: []].append(row)
        }
        var chunks: [[HeldInsert]] = []
        for table in tables {
            var chunk: [HeldInsert] = []
            var bytes = 0
            for row in byTable[table]! {
                if !chunk.isEmpty, chunk.count == rowsPerStatement || bytes + row.text.utf8.count > bytesPerStatement {
                    chunks.append(chunk)
                    (chunk, bytes) = ([], 0)
                }
                chunk.append(row)
                bytes += row.text.utf8.count
            }
            chunks.append(chunk)
        }
        return chunks.map { chunk in
            let table = chunk[0].table
            var params: [SQLValue] = []
            var values: [String] = []
            params.reserveCapacity(3 * chunk.count)
            for row in chunk {
                let n = params.count
                params += [.text(row.id), .text(row.now), .text(row.text)]
                values.append("($\(n + 1)::text, $\(n + 2)::text, $\(n + 2)::text, $\(n + 3)::json)")
            }
            let sql = "INSERT INTO \(table) (id, created_at, updated_at, doc) VALUES " + values.joined(separator: ", ")
                + " ON CONFLICT (id) DO NOTHING RETURNING id"
            return (sql, params, chunk)
        }
    }

    /// The held row was refused: its operation fails with `error`, as it would have with the row sent at once.
    private func failHeld(_ row: HeldInsert, _ error: any Error) {
        if row.part >= 0 {
            // The lowest part's refusal is the operation's: the one its caller would have met first.
            if let kept = heldFailures[row.operation] as? HeldWriteFailure, kept.part < row.part { return }
            heldFailures[row.operation] = HeldWriteFailure(part: row.part, error: error)
        } else {
            heldFailures[row.operation] = error
        }
        if row.operation != operation { pendingChanges.removeAll { $0.operation == row.operation } }
    }

    /// The conflict of a create whose `_id` is taken.
    static func taken(_ id: String, in collection: String) -> StoreError {
        .conflict("A document with _id \"\(id)\" already exists in \(collection).")
    }
}
