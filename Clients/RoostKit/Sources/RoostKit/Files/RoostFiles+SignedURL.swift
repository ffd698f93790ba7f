import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Short-lived signed URLs (`POST /files/:id/url`): a file, even a private
/// one, that `AsyncImage` or a web view loads with no Authorization header.
extension RoostFiles {
    /// A signed URL and when it stops working.
    public struct SignedURL: Sendable, Hashable {
        /// Absolute: the client's `baseURL` plus the server's path and signature.
        public let url: URL
        public let expiresAt: Date
    }

    /// An absolute URL that loads file `id` (or its thumbnail of
    /// `thumbnailSize` pixels on its longest side) without a session, until
    /// it expires: after `ttl` seconds, at most and by default the server's
    /// `file_url_max_ttl` (an hour unless configured). Only someone who may
    /// read the file gets one (else ``ServerError/Code/notFound``). Anyone
    /// holding the URL can load that file until then, even after its rules
    /// change: keep it in memory, not in shared places.
    ///
    /// ```swift
    /// AsyncImage(url: try? await roost.files.signedURL(of: place.imageId, thumbnailSize: 512)) { $0.resizable() } placeholder: { ProgressView() }
    /// ```
    /// Unlike ``localURL(of:thumbnailSize:in:)`` nothing is written to disk,
    /// and the system's URL cache may keep the answer until the URL expires.
    public func signedURL(of id: String, thumbnailSize: Int? = nil, ttl: Int? = nil) async throws -> URL {
        try await signed(id, thumbnailSize: thumbnailSize, ttl: ttl).url
    }

    /// ``signedURL(of:thumbnailSize:ttl:)`` with its expiry.
    public func signed(_ id: String, thumbnailSize: Int? = nil, ttl: Int? = nil) async throws -> SignedURL {
        let reply = try await client.call("POST", ["files", id, "url"], body: try RoostClient.body(Self.signRequest(thumbnailSize: thumbnailSize, ttl: ttl)))
        let answer = try reply.decode(SignedAnswer.self)
        guard let url = Self.absolute(answer.url, base: client.baseURL) else {
            throw RoostError.invalidResponse("a signed URL that is not a server path: \(answer.url)")
        }
        return SignedURL(url: url, expiresAt: Date(timeIntervalSince1970: TimeInterval(answer.expires)))
    }

    /// The body of `POST /files/:id/url`.
    static func signRequest(thumbnailSize: Int?, ttl: Int?) -> SignRequest {
        SignRequest(ttl: ttl, thumbnail: thumbnailSize.map { SignRequest.Thumbnail(size: $0) })
    }

    /// `path` (the server's `/files/…?expires=…&sig=…`) under `base`, which may have a path of its own.
    static func absolute(_ path: String, base: URL) -> URL? {
        guard path.hasPrefix("/"), !path.hasPrefix("//") else { return nil }
        var text = base.absoluteString
        while text.hasSuffix("/") { text.removeLast() }
        return URL(string: text + path)
    }

    struct SignRequest: Encodable, Equatable {
        struct Thumbnail: Encodable, Equatable { let size: Int }
        let ttl: Int?
        let thumbnail: Thumbnail?
    }

    struct SignedAnswer: Decodable {
        let url: String
        let expires: Int64
    }
}
