import Foundation
import JSON
import Jobs
import Logging
import Store

/// What deleting an account does to the documents and files it created, by
/// each collection's `on_user_delete` (`cascade`, `anonymise`, `keep`), run
/// by `AccountJobs` after the deletion's answer. The user's candidates are
/// read 500 at a time on a reader (`creatorCandidates`, no read of the
/// others); each of the user's documents (its `_acl.creator`) is changed in a writer job of its own, as the
/// system, through the write path: `beforeDelete`/`beforeUpdate` hooks and
/// scripts, declared references, the change feed (sync, live) and webhooks
/// see every change. After each page it rests as long as the page took, so
/// client writes keep at least half the writer. Documents another user
/// created are never touched, whoever they list in `read` or `write`.
struct AccountPurge: Sendable {
    static let pageSize = 500

    let pools: StorePools
    let hooks: HookServices
    let files: FileHandlers
    let logger: Logger

    /// What one purge did, for the log.
    struct Outcome: Sendable {
        var deleted = 0
        var anonymised = 0
        /// Documents a restricting reference (or a hook) kept, with the last reason.
        var kept = 0
        var reason: String?
    }

    /// Applies every policy to `userID`'s documents and files.
    /// - Throws: when a page cannot be read (the job is retried later).
    /// - Parameter going: called after each page with whether to go on (false: stop, the job is left for later);
    ///   `AccountJobs` renews the job's lease there.
    func run(userID: String, policies: [String: RoostConfig.UserDeletePolicy], going: @Sendable () -> Bool) throws -> Outcome {
        let outcome = LockedBox(Outcome())
        for (collection, policy) in policies.sorted(by: { $0.key < $1.key }) where policy != .keep && going() {
            if collection == FileHandlers.collection {
                try purgeFiles(userID, policy, outcome, going)
            } else if collection != AccessPolicy.usersCollection {
                try purgeDocuments(collection, userID, policy, outcome, going)
            }
        }
        return outcome.get()
    }

    /// The user's documents in `collection`, page by page in `_id` order.
    private func purgeDocuments(_ collection: String, _ userID: String, _ policy: RoostConfig.UserDeletePolicy,
                                _ outcome: LockedBox<Outcome>, _ going: @Sendable () -> Bool) throws {
        var after: Int64 = 0
        while going() {
            let started = DispatchTime.now().uptimeNanoseconds
            let from = after
            let page = try read { try $0.creatorCandidates(in: collection, userID: userID, afterRow: from, limit: Self.pageSize) }
            guard let last = page.last?.rid else { return }
            after = last
            // Candidates may name the user only in `read` or `write` (the writer job checks the creator again).
            let mine = page.filter { Self.createdBy(userID, $0.text) }.map(\.id)
            try each(mine) { id in
                { [hooks] writer, pending in
                    try Self.apply(policy, collection, id: id, userID: userID, writer: writer, hooks: hooks, pending: pending)
                }
            } record: { id, result in
                outcome.update { o in
                    switch result {
                    case .success(true): if policy == .cascade { o.deleted += 1 } else { o.anonymised += 1 }
                    case .success(false), .failure(StoreError.notFound): break // changed or gone meanwhile
                    case .failure(let error):
                        o.kept += 1
                        o.reason = "\(collection)/\(id): \(error)"
                    }
                }
            }
            rest(since: started)
        }
    }

    /// The user's files, newest first, until none of theirs is left but those kept.
    private func purgeFiles(_ userID: String, _ policy: RoostConfig.UserDeletePolicy, _ outcome: LockedBox<Outcome>,
                            _ going: @Sendable () -> Bool) throws {
        let failedBefore = LockedBox(Set<String>())
        // Handled files leave the user's list, so each page is read from the newest again;
        // past a page of files that were kept (refused before), from its last one.
        var after: String?
        while going() {
            let started = DispatchTime.now().uptimeNanoseconds
            let from = after
            let texts = try read { try $0.ownFiles(creator: userID, limit: Self.pageSize, after: from, scope: .system) }
            let listed = texts.compactMap { text -> String? in
                guard case .object(let o)? = try? JSONParser.parse(text) else { return nil }
                return o["_id"]?.stringValue
            }
            let ids = listed.filter { !failedBefore.get().contains($0) }
            if ids.isEmpty {
                guard listed.count == Self.pageSize, let last = listed.last else { return }
                after = last
                continue
            }
            let files = self.files
            try each(ids) { id in
                { writer, _ in
                    if policy == .cascade {
                        try writer.deleteFile(id: id, scope: .system)
                        return true
                    }
                    return try writer.disownFile(id: id)
                }
            } record: { id, result in
                outcome.update { o in
                    switch result {
                    case .success: if policy == .cascade { o.deleted += 1 } else { o.anonymised += 1 }
                    case .failure(StoreError.notFound): break
                    case .failure(let error):
                        o.kept += 1
                        o.reason = "files/\(id): \(error)"
                    }
                }
                if case .failure = result { failedBefore.update { _ = $0.insert(id) } }
                if policy == .cascade, case .success = result { files.removeBytes(id) }
            }
            rest(since: started)
        }
    }

    /// Whether the document text `text` has `userID` as its `_acl.creator`.
    static func createdBy(_ userID: String, _ text: String) -> Bool {
        guard case .object(let document)? = try? JSONParser.parse(text), case .object(let acl)? = document["_acl"] else { return false }
        return acl["creator"] == .string(userID)
    }

    /// One document's change in the writer's transaction: only while its
    /// `_acl.creator` is still `userID`. Returns false when it is not.
    static func apply(_ policy: RoostConfig.UserDeletePolicy, _ collection: String, id: String, userID: String,
                      writer: any DocumentWriting, hooks: HookServices, pending: HookServices.Pending) throws -> Bool {
        guard let row = try writer.existingRow(in: collection, id: id, scope: .system),
              row.acl?["creator"] == .string(userID) else { return false }
        let requestID = "account-purge"
        switch policy {
        case .keep:
            return false
        case .cascade:
            let cascade = try ReferentialDelete.plan(collection, id: id, writer: writer, revealCounts: true)
            _ = try hooks.run(.beforeDelete, collection, id: id, entity: row.document, previous: row.document,
                              requestID: requestID, scope: .system, writer: writer, pending: pending) { _ in
                try ReferentialDelete.run(cascade, hooks: hooks, writer: writer, pending: pending, requestID: requestID) {
                    try writer.delete(from: collection, id: id, existing: row, scope: .system)
                }
                return row.document.jsonText
            }
        case .anonymise:
            var document = row.document
            var acl = row.acl ?? JSONObject()
            acl["creator"] = .null
            document["_acl"] = .object(acl)
            _ = try hooks.run(.beforeUpdate, collection, id: id, entity: document, previous: row.document,
                              requestID: requestID, scope: .disowning, writer: writer, pending: pending) { entity in
                try writer.replace(in: collection, id: id, entity, existing: row, scope: .disowning).text
            }
        }
        return true
    }

    /// Submits one writer job per id and waits for all; `record` sees each
    /// outcome, after COMMIT, when the job's after hooks are handed on.
    private func each(_ ids: [String], job: (String) -> @Sendable (any DocumentWriting, HookServices.Pending) throws -> Bool,
                      record: @escaping @Sendable (String, Result<Bool, any Error>) -> Void) throws {
        let group = DispatchGroup()
        for id in ids {
            group.enter()
            let operation = job(id)
            let (hooks, pending) = (self.hooks, HookServices.Pending([]))
            let write = StorePools.WriteJob(operation: { writer in try operation(writer, pending) }) { result in
                record(id, result)
                if case .success = result { hooks.committed(pending)() }
                group.leave()
            }
            var waited = 0
            while !pools.writer.submit(write) {
                Thread.sleep(forTimeInterval: 0.01)
                waited += 1
                if waited > 6000 { group.leave(); throw Overload.writes.error }
            }
        }
        group.wait()
    }

    private func read<T: Sendable>(_ operation: @escaping @Sendable (any DocumentReading) throws -> T) throws -> T {
        for _ in 0..<600 {
            if let result = pools.onReader(operation) { return try result.get() }
            Thread.sleep(forTimeInterval: 0.1) // the readers' queue is full: again shortly
        }
        throw Overload.reads.error
    }

    /// Rests as long as the page took (at most half a second).
    private func rest(since started: UInt64) {
        Thread.sleep(forTimeInterval: min(Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9, 0.5))
    }
}
