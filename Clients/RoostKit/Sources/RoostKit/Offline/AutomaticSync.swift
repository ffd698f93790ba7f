import Foundation

/// Runs ``OfflineStore/sync()`` when the app is likely to have something to
/// send or fetch: when the client's live streams are told to reconnect (the
/// app came to the foreground, the network path changed:
/// ``RoostClient/reconnectLiveStreams()``, ``NetworkPathObserver``) and when
/// a session begins again (a log-in after the session expired, whose outbox
/// was kept). Keep it as long as the store; it stops when released.
///
/// ```swift
/// let autoSync = AutomaticSync(store: store)
/// // SwiftUI: .onChange(of: scenePhase) { if $0 == .active { roost.reconnectLiveStreams() } }
/// ```
///
/// For a silent push, call ``OfflineStore/syncForRemoteNotification()``.
public final class AutomaticSync: Sendable {
    private let client: RoostClient
    private let key: UUID
    private let sessions: Task<Void, Never>

    public init(store: OfflineStore) {
        client = store.client
        key = client.onReconnect { Task { _ = try? await store.sync() } }
        let states = client.sessionStates()
        sessions = Task {
            var first = true
            for await state in states {
                defer { first = false }
                if case .signedIn = state, !first { _ = try? await store.sync() }
            }
        }
    }

    deinit {
        client.removeReconnectHandler(key)
        sessions.cancel()
    }
}

extension OfflineStore {
    /// What a sync for a silent push found, as `UIBackgroundFetchResult` wants it.
    public enum RemoteNotificationResult: Sendable { case newData, noData, failed }

    /// Syncs for a silent (content-available) push and tells whether anything changed.
    ///
    /// ```swift
    /// func application(_: UIApplication, didReceiveRemoteNotification _: [AnyHashable: Any]) async -> UIBackgroundFetchResult {
    ///     switch await store.syncForRemoteNotification() { case .newData: .newData; case .noData: .noData; case .failed: .failed }
    /// }
    /// ```
    public func syncForRemoteNotification() async -> RemoteNotificationResult {
        guard let report = try? await sync() else { return .failed }
        return report.changed + report.deleted + report.sent > 0 ? .newData : .noData
    }
}
