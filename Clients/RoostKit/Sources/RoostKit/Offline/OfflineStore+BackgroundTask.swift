import Foundation

extension OfflineStore {
    /// ``sync()`` that asks the system for time to finish when the app goes to
    /// the background meanwhile (Apple platforms: `ProcessInfo.performExpiringActivity`,
    /// the background-task assertion that also works in app extensions and on
    /// watchOS). When that time runs out the sync is cancelled: writes not yet
    /// answered stay in the outbox for the next sync. Elsewhere it is ``sync()``.
    ///
    /// ``AutomaticSync`` syncs this way; call it yourself where a sync must not be
    /// cut short by a suspension (after the user taps Save, say).
    ///
    /// Not compiled on Apple platforms here (Linux has no Apple toolchain);
    /// written against the documented API only.
    @discardableResult
    public nonisolated func syncInBackgroundTask(reason: String = "RoostKit sync") async throws -> SyncReport {
        #if canImport(Darwin) && !os(Linux)
        let work = Task { try await self.sync() }
        let finished = SyncDone()
        // The block runs on a system queue; returning from it ends the assertion.
        // It is called again with `expired` true when the time is up.
        ProcessInfo.processInfo.performExpiringActivity(withReason: reason) { expired in
            if expired { work.cancel(); return }
            finished.semaphore.wait()
        }
        defer { finished.semaphore.signal() }
        return try await work.value
        #else
        return try await sync()
        #endif
    }
}

/// The semaphore the background-task block waits on, Sendable whatever the SDK says of `DispatchSemaphore`.
final class SyncDone: @unchecked Sendable {
    let semaphore = DispatchSemaphore(value: 0)
}
