import Foundation
import Jobs
import Logging
import Store

/// Empties a collection in the background (`/admin/collections/:name/empty`
/// and dropping one): a thread reads 500 document ids at a time on a reader
/// and deletes each in a writer job of its own, as `DELETE /:collection/:id`
/// by the admin would (the change feed records each, so sync and live
/// clients see it; declared references restrict, cascade or nullify as
/// usual). A document a reference keeps is left and counted. Hooks and
/// scripts do not run: this is the operator's bulk action, not the app's.
final class CollectionEmptier: Sendable {
    static let pageSize = 500

    /// Where an emptying stands, for the admin API and the console.
    struct Progress: Sendable {
        var deleted = 0
        /// Documents a reference kept, with the last reason.
        var kept = 0
        var reason: String?
        var done = false
    }

    let pools: StorePools
    let logger: Logger
    private let runs = LockedBox<[String: Progress]>([:])

    init(pools: StorePools, logger: Logger) {
        self.pools = pools
        self.logger = logger
    }

    func progress(of collection: String) -> Progress? { runs.get()[collection] }

    /// Starts emptying `collection`, then calls `finished`.
    /// - Returns: false when it is being emptied already.
    @discardableResult
    func start(_ collection: String, finished: @escaping @Sendable () -> Void = {}) -> Bool {
        var started = false
        runs.update { runs in
            guard runs[collection].map({ $0.done }) ?? true else { return }
            runs[collection] = Progress()
            started = true
        }
        guard started else { return false }
        NamedThread.start("emptier", background: true) { [self] in
            empty(collection)
            runs.update { $0[collection]?.done = true }
            let p = progress(of: collection)
            logger.notice("collection emptied", metadata: ["collection": "\(collection)", "deleted": "\(p?.deleted ?? 0)", "kept": "\(p?.kept ?? 0)"])
            finished()
        }
        return true
    }

    private func empty(_ collection: String) {
        var after: String?
        var failures = 0
        while true {
            let started = DispatchTime.now().uptimeNanoseconds
            let from = after
            let read = pools.onReader { try $0.documentPage(in: collection, after: from, limit: Self.pageSize) }
            guard case .success(let page)? = read else {
                // The readers' queue was full, or the read failed: again shortly, for a minute at most.
                failures += 1
                if failures > 600 {
                    runs.update { $0[collection]?.reason = "stopped: the documents could not be read (\(String(describing: read)))" }
                    return
                }
                Thread.sleep(forTimeInterval: 0.1)
                continue
            }
            failures = 0
            guard let last = page.last?.id else { return }
            let group = DispatchGroup()
            for (id, _) in page {
                group.enter()
                let job = StorePools.WriteJob(operation: { writer in try writer.delete(from: collection, id: id) }) { [runs] result in
                    runs.update { runs in
                        switch result {
                        case .success: runs[collection]?.deleted += 1
                        case .failure(StoreError.notFound): break  // deleted meanwhile
                        case .failure(let error):
                            runs[collection]?.kept += 1
                            runs[collection]?.reason = "\(error)"
                        }
                    }
                    group.leave()
                }
                while !pools.writer.submit(job) { Thread.sleep(forTimeInterval: 0.01) }
            }
            group.wait()
            after = last
            // Rest as long as the page took: client writes keep at least half the writer.
            Thread.sleep(forTimeInterval: min(Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9, 0.5))
        }
    }
}
