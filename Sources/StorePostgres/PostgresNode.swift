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

    /// Seconds a claimed thumbnail job stays this node's. The node renews it
    /// at each rescan and each finished size; a node killed mid-job loses
    /// it to another node once it passes.
    public static let jobLease: Double = 60
}
