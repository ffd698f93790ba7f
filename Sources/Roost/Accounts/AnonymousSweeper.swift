import Foundation
import Jobs
import Logging
import Store

/// Removes guest accounts unused for `anonymous_max_idle` (made before then,
/// no session seen since): a few per writer job, each through the account
/// removal of `DELETE /users/:id` (hooks, declared references, the change
/// feed and webhooks see it), as the administrator.
final class AnonymousSweeper: Sendable {
    let pools: StorePools
    let hooks: HookServices
    let maxIdle: Int64
    let interval: Double
    let logger: Logger
    private let stopped = LockedBox(false)

    init(pools: StorePools, hooks: HookServices, maxIdle: Int64, logger: Logger) {
        self.pools = pools
        self.hooks = hooks
        self.maxIdle = maxIdle
        interval = min(max(Double(maxIdle) / 4, 1), 600)
        self.logger = logger
    }

    func start() {
        NamedThread.start("guest-sweeper", background: true) { [self] in
            while !stopped.get() {
                var waited = 0.0
                while waited < interval && !stopped.get() { Thread.sleep(forTimeInterval: 0.25); waited += 0.25 }
                if !stopped.get() { sweep() }
            }
        }
    }

    func stop() { stopped.set(true) }

    /// Removes stale guests, 20 per writer job, until none is left.
    func sweep() {
        let (hooks, maxIdle) = (self.hooks, self.maxIdle)
        while !stopped.get() {
            let pending = HookServices.Pending([])
            let result = MailOutbox.onWriter(pools) { writer -> Int in
                let ids = try writer.staleAnonymousUsers(idleSince: Authenticator.now - maxIdle, limit: 20)
                for id in ids {
                    if let existing = try writer.existingRow(in: AccountHandlers.users, id: id, scope: .system) {
                        try AccountHandlers.removeAccount(writer, id: id, existing: existing, scope: AccessScope(principal: .admin, level: .shared),
                                                          hooks: hooks, pending: pending, requestID: "guest-sweep")
                    } else {
                        try writer.deleteCredentials(userID: id)
                    }
                }
                return ids.count
            }
            switch result {
            case .success(let count):
                if count > 0 {
                    hooks.committed(pending)()
                    pools.sessionsEnded()
                    logger.info("removed idle guest accounts", metadata: ["count": "\(count)"])
                }
                if count < 20 { return }
            case .failure(let error):
                logger.warning("guest account sweep failed", metadata: ["error": "\(error)"])
                return
            }
        }
    }
}
