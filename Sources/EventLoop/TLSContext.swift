import CEventTLS

/// The certificate and key of the HTTPS listeners, shared by every loop.
///
/// `reload` loads the pair again and, only if it loads, new connections use
/// it; open connections keep the context they were accepted with, so a
/// certificate renewal drops nothing. Thread-safe (the C side swaps the
/// context under a lock); never freed, as it lives as long as the process.
public final class TLSContext: @unchecked Sendable {
    let handle: OpaquePointer
    /// The `Strict-Transport-Security` value sent on every TLS response, if any.
    public let hsts: String?

    public struct LoadError: Error, CustomStringConvertible {
        public let description: String
    }

    /// Loads a PEM certificate chain (leaf first) and its PEM private key.
    public init(certificate: String, key: String, hsts: String?) throws {
        var error = [CChar](repeating: 0, count: 512)
        guard let handle = roost_tls_new(certificate, key, &error, error.count) else {
            throw LoadError(description: Self.text(error))
        }
        self.handle = handle
        self.hsts = hsts
    }

    /// Loads the pair again for new connections; throws (keeping the running
    /// pair) when it does not load.
    public func reload(certificate: String, key: String) throws {
        var error = [CChar](repeating: 0, count: 512)
        guard roost_tls_reload(handle, certificate, key, &error, error.count) == 0 else {
            throw LoadError(description: Self.text(error))
        }
    }

    /// "subject; expires date" of the certificate new connections get.
    public var summary: String {
        var out = [CChar](repeating: 0, count: 512)
        roost_tls_describe(handle, &out, out.count)
        return Self.text(out)
    }

    /// A NUL-terminated C buffer as a string.
    static func text(_ buffer: [CChar]) -> String {
        String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
