#if canImport(Network)
import Foundation
import Network

/// Watches the device's network path (`NWPathMonitor`, Apple platforms) and,
/// whenever it changes to a usable one (Wi-Fi to cellular, back online),
/// reconnects the client's live streams at once
/// (``RoostClient/reconnectLiveStreams()``) and runs `whenOnline`, such as a
/// sync. Keep it alive as long as the client; it stops when released.
///
/// ```swift
/// let pathObserver = NetworkPathObserver(client: roost) { Task { try? await store.sync() } }
/// ```
///
/// Compiled only where `Network` exists (not on Linux, where RoostKit's tests
/// run): the reconnect it triggers is tested there through
/// ``RoostClient/reconnectLiveStreams()``.
public final class NetworkPathObserver: @unchecked Sendable {
    private let monitor: NWPathMonitor

    /// What the observer compares between updates.
    private struct Snapshot: Equatable {
        let usable: Bool
        let interfaces: [String]
    }

    public init(client: RoostClient, whenOnline: (@Sendable () -> Void)? = nil) {
        let monitor = NWPathMonitor()
        let last = Locked<Snapshot?>(nil)
        monitor.pathUpdateHandler = { path in
            let now = Snapshot(usable: path.status == .satisfied, interfaces: path.availableInterfaces.map { $0.name })
            let changed = last.update { (previous: inout Snapshot?) -> Bool in
                defer { previous = now }
                return previous != nil && previous != now
            }
            guard changed, now.usable else { return }
            client.reconnectLiveStreams()
            whenOnline?()
        }
        monitor.start(queue: DispatchQueue(label: "RoostKit.NetworkPathObserver"))
        self.monitor = monitor
    }

    deinit { monitor.cancel() }
}
#endif
