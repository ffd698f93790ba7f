import Foundation

/// Runs ``OfflineStore/syncInBackgroundTask(reason:)`` when the app is likely
/// to have something to send or fetch:
/// - when the app comes to the foreground (iOS, iPadOS, tvOS, visionOS:
///   `UIApplication.willEnterForegroundNotification`; macOS:
///   `NSApplication.didBecomeActiveNotification`), which also reconnects the
///   client's live streams;
/// - when the client's live streams are told to reconnect
///   (``RoostClient/reconnectLiveStreams()``; ``NetworkPathObserver`` on a network change);
/// - when a session begins again (a log-in after the session expired, whose
///   outbox was kept);
/// - on a silent push, through ``OfflineStore/syncForRemoteNotification()``
///   or ``OfflineStore/handleSyncPush(userInfo:timeLimit:)``, which the app's push handler calls.
///
/// Keep it as long as the store; it stops when released.
///
/// ```swift
/// let autoSync = AutomaticSync(store: store)
/// let path = NetworkPathObserver(client: roost)   // reconnect (and so sync) on network changes
/// ```
public final class AutomaticSync: Sendable {
    private let client: RoostClient
    private let key: UUID
    private let sessions: Task<Void, Never>
    private let foreground: Locked<(any NSObjectProtocol)?>

    /// - Parameter observeForeground: sync and reconnect when the app comes to
    ///   the foreground (Apple platforms with UIKit or AppKit; ignored elsewhere).
    public convenience init(store: OfflineStore, observeForeground: Bool = true) {
        self.init(store: store, foregroundNotification: observeForeground ? Self.foregroundNotification : nil)
    }

    /// Observes `foregroundNotification` (tests post their own on Linux).
    init(store: OfflineStore, foregroundNotification name: Notification.Name?) {
        let client = store.client
        self.client = client
        key = client.onReconnect { Task { _ = try? await store.syncInBackgroundTask() } }
        let states = client.sessionStates()
        sessions = Task {
            var first = true
            for await state in states {
                defer { first = false }
                if case .signedIn = state, !first { _ = try? await store.syncInBackgroundTask() }
            }
        }
        foreground = Locked(nil)
        if let name {
            // Reconnecting runs the reconnect handler above, which syncs.
            foreground.set(NotificationCenter.default.addObserver(forName: name, object: nil, queue: nil) { _ in
                client.reconnectLiveStreams()
            })
        }
    }

    /// The app-came-to-the-foreground notification, by its raw name: no UIKit
    /// or AppKit import, and no main-actor-isolated constant read off the main actor.
    static var foregroundNotification: Notification.Name? {
        #if os(iOS) || os(tvOS) || os(visionOS)
        return Notification.Name("UIApplicationWillEnterForegroundNotification")  // UIApplication.willEnterForegroundNotification
        #elseif os(macOS)
        return Notification.Name("NSApplicationDidBecomeActiveNotification")  // NSApplication.didBecomeActiveNotification
        #else
        return nil
        #endif
    }

    deinit {
        client.removeReconnectHandler(key)
        sessions.cancel()
        if let observer = foreground.value { NotificationCenter.default.removeObserver(observer) }
    }
}

extension OfflineStore {
    /// What a sync for a silent push found, as `UIBackgroundFetchResult` wants it.
    public enum RemoteNotificationResult: Sendable { case newData, noData, failed }

    /// Syncs for a silent (content-available) push and tells whether anything
    /// changed: the entry point an app's push handler calls.
    ///
    /// ```swift
    /// func application(_: UIApplication, didReceiveRemoteNotification _: [AnyHashable: Any]) async -> UIBackgroundFetchResult {
    ///     switch await store.syncForRemoteNotification() { case .newData: .newData; case .noData: .noData; case .failed: .failed }
    /// }
    /// ```
    public func syncForRemoteNotification() async -> RemoteNotificationResult {
        guard let report = try? await syncInBackgroundTask(reason: "RoostKit push sync") else { return .failed }
        return report.changed + report.deleted + report.sent > 0 ? .newData : .noData
    }
}
