import Foundation

/// A PostgreSQL cluster that exists only for one test process: `initdb` into
/// a temporary directory, `pg_ctl start` on a free loopback port with fsync
/// off, one database per caller (`database(named:)`), and `pg_ctl stop -m
/// immediate` plus removal of the directory when the process exits.
///
/// Run as root (as CI runs `make test`), `initdb` and `pg_ctl` run as the
/// `postgres` user that Debian's server package creates (initdb refuses
/// root). The server binaries come from `$ROOST_PG_BINDIR`, else the newest
/// `/usr/lib/postgresql/<version>/bin` (version 15 or later). When PostgreSQL
/// is not installed, `shared()` throws: the tests that need it fail, they do
/// not skip.
public final class ThrowawayPostgres: @unchecked Sendable {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    public let directory: URL
    public let port: Int
    let bin: URL
    private let lock = NSLock()
    private var databases = 0

    nonisolated(unsafe) private static var cluster: Result<ThrowawayPostgres, Failure>?
    private static let clusterLock = NSLock()

    /// The process's cluster, started at the first call.
    public static func shared() throws -> ThrowawayPostgres {
        try clusterLock.withLock {
            if cluster == nil {
                do {
                    let started = try ThrowawayPostgres()
                    cluster = .success(started)
                    atexit { ThrowawayPostgres.stopShared() }
                } catch let failure as Failure {
                    cluster = .failure(failure)
                } catch {
                    cluster = .failure(Failure(description: "\(error)"))
                }
            }
            return try cluster!.get()
        }
    }

    static func stopShared() {
        if case .success(let pg)? = cluster { pg.stop() }
    }

    /// A connection URL (libpq's form) for a fresh, empty database in the cluster.
    public func database(named prefix: String = "t") throws -> String {
        let name = lock.withLock { () -> String in
            databases += 1
            return "\(prefix)_\(databases)_\(ProcessInfo.processInfo.processIdentifier)"
        }
        try run(bin.appendingPathComponent("createdb").path,
                ["-h", "127.0.0.1", "-p", String(port), "-U", "roost", name])
        return url(database: name)
    }

    public func url(database: String) -> String { "postgresql://roost@127.0.0.1:\(port)/\(database)" }

    init() throws {
        bin = try Self.binaries()
        Self.stopOrphans(bin)
        let base = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("roost-pg-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: base, withIntermediateDirectories: true)
        try String(getpid()).write(to: base.appendingPathComponent("owner"), atomically: true, encoding: .utf8)
        directory = base
        if getuid() == 0 {
            // The postgres user owns the cluster; it needs to enter the directory.
            try Self.runOnce("/bin/chown", ["postgres:", base.path])
        }
        let data = base.appendingPathComponent("data").path
        try Self.run(bin.appendingPathComponent("initdb").path,
                ["-D", data, "-U", "roost", "--auth=trust", "-E", "UTF8", "--locale=C.UTF-8", "--no-sync"])
        var lastError: Error?
        for _ in 0..<5 {
            let candidate = Self.freePort()
            do {
                try Self.run(bin.appendingPathComponent("pg_ctl").path, [
                    "-D", data, "-l", base.appendingPathComponent("log").path, "-w", "-t", "60",
                    "-o", "-p \(candidate) -k \(base.path) -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200",
                    "start",
                ])
                port = candidate
                return
            } catch {
                lastError = error // most likely the port was taken meanwhile: try another
            }
        }
        let log = (try? String(contentsOf: base.appendingPathComponent("log"), encoding: .utf8)) ?? ""
        throw Failure(description: "pg_ctl start failed: \(lastError.map { "\($0)" } ?? "")\n\(log)")
    }

    /// Stops the server at once (no checkpoint) and removes its files.
    public func stop() {
        _ = try? run(bin.appendingPathComponent("pg_ctl").path, ["-D", directory.appendingPathComponent("data").path, "-m", "immediate", "stop"])
        try? FileManager.default.removeItem(at: directory)
    }

    /// Stops and removes the clusters of test processes that died without
    /// stopping theirs (killed by a timeout, say): each cluster's directory
    /// names its owner's pid.
    static func stopOrphans(_ bin: URL) {
        let temp = NSTemporaryDirectory()
        for name in (try? FileManager.default.contentsOfDirectory(atPath: temp)) ?? [] where name.hasPrefix("roost-pg-") {
            let dir = URL(fileURLWithPath: temp).appendingPathComponent(name)
            guard let text = try? String(contentsOf: dir.appendingPathComponent("owner"), encoding: .utf8),
                  let pid = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines)),
                  kill(pid, 0) != 0 && errno == ESRCH else { continue }
            _ = try? run(bin.appendingPathComponent("pg_ctl").path, ["-D", dir.appendingPathComponent("data").path, "-m", "immediate", "stop"])
            try? FileManager.default.removeItem(at: dir)
        }
    }

    /// The server's bin directory.
    static func binaries() throws -> URL {
        if let env = ProcessInfo.processInfo.environment["ROOST_PG_BINDIR"] { return URL(fileURLWithPath: env) }
        let root = "/usr/lib/postgresql"
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []).compactMap(Int.init).filter { $0 >= 15 }
        guard let newest = versions.max(),
              FileManager.default.isExecutableFile(atPath: "\(root)/\(newest)/bin/initdb") else {
            throw Failure(description: "PostgreSQL 15 or later is not installed (no \(root)/<version>/bin/initdb): run `make deps`, which installs postgresql-15.")
        }
        return URL(fileURLWithPath: "\(root)/\(newest)/bin")
    }

    /// A port the kernel just handed out on loopback (closed again at once).
    static func freePort() -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    func run(_ tool: String, _ arguments: [String]) throws { try Self.run(tool, arguments) }

    /// Runs a server tool, as the postgres user when this process is root.
    static func run(_ tool: String, _ arguments: [String]) throws {
        if getuid() == 0 {
            try runOnce("/usr/sbin/runuser", ["-u", "postgres", "--", tool] + arguments)
        } else {
            try runOnce(tool, arguments)
        }
    }

    /// Runs `tool` and waits for it with posix_spawn and waitpid. (Foundation's
    /// `Process` could miss the exit of `runuser` once `pg_ctl` had started
    /// a server in the background, and wait for ever.) Output goes to a file,
    /// not a pipe: the server would keep a pipe's write end open.
    static func runOnce(_ tool: String, _ arguments: [String]) throws {
        let log = NSTemporaryDirectory() + "roost-pg-tool-\(UUID().uuidString).log"
        defer { unlink(log) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let argv: [UnsafeMutablePointer<CChar>?] = ([tool] + arguments).map { strdup($0) } + [nil]
        defer { for p in argv { free(p) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, tool, &actions, nil, argv, environ)
        guard spawned == 0 else { throw Failure(description: "cannot start \(tool): error \(spawned)") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        // WIFEXITED and WEXITSTATUS are macros Swift cannot import.
        let exited = status & 0x7F == 0, code = (status >> 8) & 0xFF
        guard exited && code == 0 else {
            throw Failure(description: "\(tool) \(arguments.joined(separator: " ")) failed (status \(status)): \(text)")
        }
    }
}
