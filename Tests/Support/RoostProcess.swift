import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A real `roostd` started for one test: its own data directory, a free
/// port picked by the kernel (`--listen 127.0.0.1:0`), and its stderr in a file.
public final class RoostProcess: @unchecked Sendable {
    public let dataDir: URL
    public let configPath: URL
    public private(set) var process: Process
    public private(set) var port = 0
    public private(set) var logPath: URL

    public var baseURL: String { "http://127.0.0.1:\(port)" }

    /// The built daemon: `$ROOSTD`, else beside the test bundle, else `.build/debug`.
    public static var binary: String {
        if let env = ProcessInfo.processInfo.environment["ROOSTD"] { return env }
        let beside = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("roostd").path
        if FileManager.default.isExecutableFile(atPath: beside) { return beside }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return root.appendingPathComponent(".build/debug/roostd").path
    }

    /// Starts a daemon, optionally with a YAML config, and waits until it listens.
    public init(config: String? = nil, dataDir: URL? = nil, extraArguments: [String] = []) throws {
        let dir = dataDir ?? FileManager.default.temporaryDirectory.appendingPathComponent("roost-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        self.dataDir = dir
        // The core API tests run without accounts: collections they do not
        // configure are public unless the test's config says otherwise.
        var text = config ?? ""
        if !text.contains("default_permission") { text = "default_permission: public\n" + text }
        let path = dir.appendingPathComponent("roost.yaml")
        try text.write(to: path, atomically: true, encoding: .utf8)
        configPath = path
        process = Process()
        logPath = dir
        try start(extraArguments: extraArguments)
    }

    /// (Re)starts the daemon on the same data directory (and, on a restart, the same port).
    public func start(extraArguments: [String] = []) throws {
        logPath = dataDir.appendingPathComponent("roostd-\(UUID().uuidString).log")
        FileManager.default.createFile(atPath: logPath.path, contents: nil)
        let logHandle = try FileHandle(forWritingTo: logPath)
        process = Process()
        process.executableURL = URL(fileURLWithPath: Self.binary)
        // A restart keeps the port, so clients reconnect to the same address.
        var args = ["serve", "--listen", port > 0 ? "127.0.0.1:\(port)" : "127.0.0.1:0", "--data-dir", dataDir.appendingPathComponent("data").path]
        args += ["--config", configPath.path]
        process.arguments = args + extraArguments
        // Other suites in this process set systemd's variables for their fakes;
        // a daemon started here must not talk to them.
        var environment = ProcessInfo.processInfo.environment
        for key in ["NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID", "LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES", "JOURNAL_STREAM"] {
            environment[key] = nil
        }
        process.environment = environment
        process.standardError = logHandle
        process.standardOutput = logHandle
        try process.run()
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            if let text = try? String(contentsOf: logPath, encoding: .utf8),
               let range = text.range(of: "listen=127.0.0.1:") {
                let digits = text[range.upperBound...].prefix { $0.isNumber }
                port = Int(digits) ?? 0
                if port > 0 { return }
            }
            if !process.isRunning { throw Failure("roostd exited early: \(self.log())") }
            Thread.sleep(forTimeInterval: 0.05)
        }
        throw Failure("roostd did not start: \(self.log())")
    }

    public func log() -> String { (try? String(contentsOf: logPath, encoding: .utf8)) ?? "" }

    /// Graceful stop (SIGTERM), waiting for exit.
    public func stop() {
        guard process.isRunning else { return }
        process.terminate()
        process.waitUntilExit()
    }

    /// `kill -9`: no chance to flush or checkpoint.
    public func crash() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL); process.waitUntilExit() }
        try? FileManager.default.removeItem(at: dataDir)
    }

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
        public init(_ d: String) { description = d }
    }
}
