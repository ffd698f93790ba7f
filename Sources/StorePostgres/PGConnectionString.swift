/// libpq connection strings with roostd's defaults filled in.
enum PGConnectionString {
    /// Seconds a connection attempt may take before it fails (libpq's
    /// `connect_timeout`), unless the URL or `PGCONNECT_TIMEOUT` sets one:
    /// without it a server that accepts TCP but never answers (or a host
    /// that drops packets) holds a reader or the writer until the kernel's
    /// TCP timeout, minutes, instead of answering 503.
    static let defaultConnectTimeout = 5

    /// `conninfo` (a `postgres://` URL, `key=value` pairs, or empty for the
    /// `PG*` variables alone) with `connect_timeout` added when it has none.
    static func withDefaults(_ conninfo: String, environment: [String: String]) -> String {
        if conninfo.contains("connect_timeout") || environment["PGCONNECT_TIMEOUT"] != nil { return conninfo }
        let setting = "connect_timeout=\(defaultConnectTimeout)"
        if conninfo.hasPrefix("postgres://") || conninfo.hasPrefix("postgresql://") {
            // The query part starts at the first '?'; a fragment is not part of libpq's URI syntax.
            return conninfo + (conninfo.contains("?") ? "&" : "?") + setting
        }
        return conninfo.isEmpty ? setting : conninfo + " " + setting
    }
}
