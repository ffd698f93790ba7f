import Foundation

/// This process as one node of a cluster sharing a database: the name its
/// work claims (thumbnail jobs) are made under, and how long a claim lasts.
public enum PostgresNode {
    /// Host, process id and a random part: unique per process, also across
    /// restarts that reuse a pid. Every connection of the process claims as it.
    public static let id: String = {
        let random = (0..<4).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
        return "\(hostName):\(getpid()):\(random)"
    }()

    /// `gethostname`, never a DNS look-up (Foundation's `hostName` may resolve).
    public static var hostName: String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "host" }
        return String(cString: buffer)
    }

    /// Seconds a claim (a thumbnail job, a webhook delivery) stays this
    /// node's unless renewed, by default (`claim_lease_seconds`). The node
    /// renews its claims at each rescan (every 3 s), each finished size and
    /// each dispatcher poll (at least once a second); a node killed mid-job
    /// loses its claims to another node once they pass.
    public static let defaultLease: Double = 60
}
