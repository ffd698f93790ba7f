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
        return adding(setting, to: conninfo)
    }

    /// `conninfo` naming its connection `roostd-<role>` (`application_name`,
    /// shown in `pg_stat_activity`), unless the URL or `PGAPPNAME` names it.
    static func named(_ conninfo: String, role: String, environment: [String: String]) -> String {
        if conninfo.contains("application_name") || environment["PGAPPNAME"] != nil { return conninfo }
        return adding("application_name=roostd-\(role)", to: conninfo)
    }

    /// `conninfo` with one `key=value` setting more, in its own syntax (URL query or keywords).
    private static func adding(_ setting: String, to conninfo: String) -> String {
        if conninfo.hasPrefix("postgres://") || conninfo.hasPrefix("postgresql://") {
            // The query part starts at the first '?'; a fragment is not part of libpq's URI syntax.
            return conninfo + (conninfo.contains("?") ? "&" : "?") + setting
        }
        return conninfo.isEmpty ? setting : conninfo + " " + setting
    }
}
