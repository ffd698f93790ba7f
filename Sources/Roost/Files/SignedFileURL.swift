import Files
import Foundation
import HTTP
import Store

/// A signed file URL: `GET /files/:id?expires=<unix>&sig=<…>` (or the
/// thumbnail route's, with its size) that loads a file with no
/// Authorization header, for `<img src>` and SwiftUI's `AsyncImage`.
///
/// `sig` is base64url HMAC-SHA256 over the file id, the variant (`original`
/// or `thumbnail/<size name>`) and the expiry, under a sub-key of the
/// database's secret (`CursorSeal.signature`): one for all nodes, never in
/// YAML or logs. A signature is bound to all three: it cannot be moved to
/// another file or size, nor made to last longer. It is checked before the
/// file is looked up; access rules are not consulted again (a URL stays good
/// until it expires, as PocketBase's file tokens do: keep `file_url_max_ttl` short).
struct SignedFileURL: Equatable {
    static let purpose = "file-url-v1"
    static let original = "original"

    let id: String
    let variant: String
    let expires: Int64

    /// The signed text: one field per line (an id and a variant hold no newline).
    var message: String { "\(id)\n\(variant)\n\(expires)" }

    /// The variant of a thumbnail named `name` (`ThumbnailSpec.name`).
    static func thumbnail(_ name: String) -> String { "thumbnail/\(name)" }

    /// The `expires=…&sig=…` that sign this claim.
    func queryItems(_ seal: CursorSeal) -> String {
        "expires=\(expires)&sig=\(seal.signature(message, purpose: Self.purpose))"
    }

    /// True when the request carries a signed URL's parameters (either one).
    static func isSigned(_ query: [String: String]) -> Bool { query["sig"] != nil || query["expires"] != nil }

    /// Checks a signed request for file `id`'s `variant` at `now`.
    /// - Returns: the seconds it stays valid (at least 1).
    /// - Throws: 403 `InvalidSignature` (missing, malformed or not ours for
    ///   this file and variant), 403 `SignedURLExpired` (ours, but past its expiry).
    static func check(_ query: [String: String], id: String, variant: String, seal: CursorSeal, now: Int64) throws -> Int64 {
        guard let text = query["expires"], text.utf8.count <= 12, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
              let expires = Int64(text), let sig = query["sig"],
              seal.verifies(sig, SignedFileURL(id: id, variant: variant, expires: expires).message, purpose: purpose) else {
            throw invalid
        }
        guard expires > now else {
            throw HTTPError(.signedURLExpired, "This signed URL expired at \(Timestamp.format(Date(timeIntervalSince1970: Double(expires)))); ask for a new one (POST /files/:id/url).")
        }
        return expires - now
    }

    static let invalid = HTTPError(.invalidSignature, "This URL's signature is not valid for this file and size (changed, incomplete, or made for another).")

    static var now: Int64 { Int64(Date().timeIntervalSince1970) }
}

/// What `POST /files/:id/url` asks for: `{"ttl": 600, "thumbnail": {"size": 128}}`,
/// every member optional. `thumbnail` takes the thumbnail route's query
/// (`size`, or `w`/`h`/`fit`), or `true` for the default size.
struct SignedURLAsk {
    var ttl: Int
    /// The thumbnail route's query, in a fixed order; nil for the file itself.
    var thumbnailQuery: [(String, String)]?

    init(_ body: [UInt8], maxTTL: Int, defaultSize: Int) throws {
        ttl = maxTTL
        guard !body.isEmpty else { return }
        let object = try CollectionHandlers.object(body)
        for key in object.keys where key != "ttl" && key != "thumbnail" {
            throw HTTPError(.badRequest, "Unknown member \"\(key)\": a signed URL takes ttl and thumbnail.")
        }
        switch object["ttl"] {
        case nil, .null?: break
        case .int(let n)? where n >= 1: ttl = Int(min(n, Int64(maxTTL)))
        default: throw HTTPError(.badRequest, "ttl must be a whole number of seconds, at least 1 (at most file_url_max_ttl, \(maxTTL); more is cut to it).")
        }
        switch object["thumbnail"] {
        case nil, .null?, .bool(false)?: break
        case .bool(true)?: thumbnailQuery = [("size", "\(defaultSize)")]
        case .object(let spec)?:
            var items: [(String, String)] = []
            for key in spec.keys where !["size", "w", "h", "fit"].contains(key) {
                throw HTTPError(.badRequest, "Unknown thumbnail member \"\(key)\": size, or w, h and fit.")
            }
            for key in ["size", "w", "h"] {
                switch spec[key] {
                case nil: break
                case .int(let n)?: items.append((key, "\(n)"))
                default: throw HTTPError(.badRequest, "thumbnail.\(key) must be a whole number from 1 to \(ThumbnailSpec.maxEdge).")
                }
            }
            switch spec["fit"] {
            case nil: break
            case .string(let fit)?: items.append(("fit", fit))
            default: throw HTTPError(.badRequest, "thumbnail.fit must be cover or contain.")
            }
            thumbnailQuery = items.isEmpty ? [("size", "\(defaultSize)")] : items
        default: throw HTTPError(.badRequest, "thumbnail must be true or an object like {\"size\": 128}.")
        }
    }

    var thumbnailParameters: [String: String]? {
        thumbnailQuery.map { Dictionary($0, uniquingKeysWith: { a, _ in a }) }
    }
}
