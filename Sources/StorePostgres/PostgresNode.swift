import Foundation

/// Names this process among the nodes sharing one database: the claims it
/// holds (webhook deliveries) carry this name.
public enum PostgresNode {
    /// `<hostname>-<pid>`: unique among live processes of a cluster.
    public static let defaultID: String = {
        var name = [CChar](repeating: 0, count: 256)
        let host = gethostname(&name, name.count - 1) == 0 ? String(cString: name) : "host"
        return "\(host)-\(ProcessInfo.processInfo.processIdentifier)"
    }()
}
