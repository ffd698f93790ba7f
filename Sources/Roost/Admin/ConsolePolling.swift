import Daemon

/// The console's own polling: its Dashboard reads `GET /admin/stats` and its
/// Logs page `GET /admin/logs` once a second each. Their answered access
/// entries (200) would fill the Logs page, so `GET /admin/logs` leaves them
/// out unless asked for them (`?polling=true`, the page's "Show console
/// polling"). A refused or failed one (401, 403, 5xx) is always shown, and
/// stderr and the journal get every entry as before.
enum ConsolePolling {
    static let routes: Set<String> = ["/admin/stats", "/admin/logs"]

    static func isPolling(_ entry: AccessEntry) -> Bool {
        entry.status == 200 && (entry.method == "GET" || entry.method == "HEAD") && routes.contains(entry.route)
    }

    /// What `GET /admin/logs` leaves out: the polling, unless it was asked for.
    static func hiding(unless shown: Bool) -> ((AccessEntry) -> Bool)? {
        if shown { return nil }
        return { entry in isPolling(entry) }
    }
}
