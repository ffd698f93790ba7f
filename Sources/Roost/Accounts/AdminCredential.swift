import Auth
import Foundation
import Logging

/// The operator's credential: `admin_token` from the config, or one created
/// in the console on first run, whose hash is kept in `data_dir/admin-credential`
/// (mode 0600; the token itself is shown once, in the browser, never stored).
///
/// With neither, start-up makes a one-time setup code (`startSetup`), shown
/// only on the terminal and in the journal as a console link. The code is
/// single use, lives `setupLifetime`, is compared in constant time by its
/// hash, and is voided after `maxSetupFailures` wrong guesses (restart to
/// get a new one). Thread-safe: one short lock.
final class AdminCredential: @unchecked Sendable {
    static let fileName = "admin-credential"
    static let setupLifetime: TimeInterval = 15 * 60
    static let maxSetupFailures = 5

    private let configuredHash: String?
    private let path: String
    private let lock = NSLock()
    private var storedHash: String?
    private var setup: (hash: String, expires: Date, failures: Int)?

    /// - Parameter dataDir: nil in tests that keep no files (then only `admin_token` counts).
    init(configuredToken: String?, dataDir: String?) throws {
        configuredHash = configuredToken.map(SessionToken.hash)
        path = dataDir.map { ($0 as NSString).appendingPathComponent(Self.fileName) } ?? ""
        if !path.isEmpty, FileManager.default.fileExists(atPath: path) {
            let text = try String(contentsOfFile: path, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
            guard text.utf8.count == 64, text.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) else {
                throw RoostConfig.Invalid("\(path) is not an admin credential hash (64 hex digits); remove it to set one up again")
            }
            storedHash = text
        }
    }

    /// Where the credential comes from, for the start-up block.
    var source: String? {
        lock.withLock {
            if configuredHash != nil { return "admin_token (configuration)" }
            return storedHash == nil ? nil : "created in the console (its hash is in \(path))"
        }
    }

    var exists: Bool { lock.withLock { configuredHash != nil || storedHash != nil } }

    /// Whether a setup code waits to be used.
    var setupPending: Bool { lock.withLock { setup.map { $0.expires > Date() } ?? false } }

    /// Whether `tokenHash` is the operator's (constant time against each).
    func matches(tokenHash: String) -> Bool {
        let (configured, stored) = lock.withLock { (configuredHash, storedHash) }
        var match = false
        if let configured, SessionToken.constantTimeEquals(tokenHash, configured) { match = true }
        if let stored, SessionToken.constantTimeEquals(tokenHash, stored) { match = true }
        return match
    }

    /// A new one-time setup code when there is no credential and files can be kept; nil otherwise.
    func startSetup() -> String? {
        lock.withLock {
            guard configuredHash == nil, storedHash == nil, !path.isEmpty else { return nil }
            let (code, hash) = SessionToken.generate()
            setup = (hash, Date().addingTimeInterval(Self.setupLifetime), 0)
            return code
        }
    }

    enum SetupOutcome: Equatable {
        /// The new admin token, to show once.
        case created(String)
        case alreadyExists
        /// Used, expired or voided: restart for a new code.
        case noCode
        case wrongCode(attemptsLeft: Int)
    }

    /// Uses the setup code: on a match, makes the admin token and stores its hash.
    /// Blocks on a small file write and fsync: call it on a worker thread.
    func completeSetup(code: String, logger: Logger) throws -> SetupOutcome {
        try lock.withLock {
            if configuredHash != nil || storedHash != nil { return .alreadyExists }
            guard let pending = setup, pending.expires > Date() else { setup = nil; return .noCode }
            guard SessionToken.constantTimeEquals(SessionToken.hash(code), pending.hash) else {
                let failures = pending.failures + 1
                if failures >= Self.maxSetupFailures {
                    setup = nil
                    logger.warning("the console setup code was voided after \(failures) wrong attempts; restart roostd for a new link")
                    return .wrongCode(attemptsLeft: 0)
                }
                setup = (pending.hash, pending.expires, failures)
                logger.warning("a wrong console setup code was sent", metadata: ["attempts_left": "\(Self.maxSetupFailures - failures)"])
                return .wrongCode(attemptsLeft: Self.maxSetupFailures - failures)
            }
            let (token, hash) = SessionToken.generate()
            try Self.writePrivately(hash + "\n", to: path)
            storedHash = hash
            setup = nil
            logger.notice("the admin credential was created in the console", metadata: ["file": "\(path)"])
            return .created(token)
        }
    }

    /// Writes `text` to a new 0600 file beside `path`, fsyncs it and renames it into place.
    static func writePrivately(_ text: String, to path: String) throws {
        let temporary = path + ".new"
        unlink(temporary)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw RoostConfig.Invalid("cannot create \(temporary): \(String(cString: strerror(errno)))") }
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        let synced = fsync(fd) == 0
        close(fd)
        guard written == bytes.count, synced, rename(temporary, path) == 0 else {
            unlink(temporary)
            throw RoostConfig.Invalid("cannot write \(path): \(String(cString: strerror(errno)))")
        }
    }
}
