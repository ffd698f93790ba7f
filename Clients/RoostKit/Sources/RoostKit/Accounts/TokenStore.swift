import Foundation
#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Android)
import Android
#endif

/// Where a ``RoostClient`` keeps its session between launches.
///
/// Implementations: ``FileTokenStore`` (a file readable only by the user),
/// ``KeychainTokenStore`` on Apple platforms, ``MemoryTokenStore`` for
/// tests and one-off tools.
public protocol TokenStore: Sendable {
    /// The stored session, or nil when none was saved.
    func load() throws -> RoostSession?
    /// Saves the session, replacing any other.
    func save(_ session: RoostSession) throws
    /// Forgets the session.
    func clear() throws
}

/// A ``TokenStore`` that forgets everything when the process ends.
public final class MemoryTokenStore: TokenStore, @unchecked Sendable {
    private let lock = NSLock()
    private var session: RoostSession?

    public init(_ session: RoostSession? = nil) { self.session = session }
    public func load() throws -> RoostSession? { lock.critical { session } }
    public func save(_ session: RoostSession) throws { lock.critical { self.session = session } }
    public func clear() throws { lock.critical { session = nil } }
}

/// A ``TokenStore`` in one JSON file, written atomically with owner-only
/// permissions (0600). The default on Linux.
public struct FileTokenStore: TokenStore {
    /// The file.
    public let url: URL

    public init(url: URL) { self.url = url }

    public func load() throws -> RoostSession? {
        guard FileManager.default.fileExists(atPath: url.path) else { return nil }
        return try JSONDecoder().decode(RoostSession.self, from: Data(contentsOf: url))
    }

    public func save(_ session: RoostSession) throws {
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        let data = try JSONEncoder().encode(session)
        let temporary = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).\(UUID().uuidString)")
        guard FileManager.default.createFile(atPath: temporary.path, contents: data, attributes: [.posixPermissions: 0o600]) else {
            throw RoostError.localStore("cannot write \(temporary.path)")
        }
        // rename(2) replaces an existing file atomically (FileManager.replaceItemAt
        // failed on Linux when the file existed: a second save lost the session).
        guard rename(temporary.path, url.path) == 0 else {
            let reason = String(cString: strerror(errno))
            try? FileManager.default.removeItem(at: temporary)
            throw RoostError.localStore("cannot replace \(url.path): \(reason)")
        }
    }

    public func clear() throws {
        if FileManager.default.fileExists(atPath: url.path) { try FileManager.default.removeItem(at: url) }
    }
}
