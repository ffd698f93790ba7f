import Foundation
import HTTP
import JSON

/// ETags and conditional writes. An entity's ETag is its `_updatedAt` in
/// double quotes: it changes with every write (the writer keeps
/// `_updatedAt` strictly increasing per entity), and any copy of an entity,
/// from a list or a delta sync as much as from a GET, carries it.
enum Preconditions {
    /// The ETag of a stored entity's JSON text (its `_updatedAt`, the last
    /// field the writer puts in every document), or nil when it has none.
    static func etag(ofJSON text: String) -> String? {
        // On UTF-8 bytes, from the end (where Roost writes `_updatedAt`): every write's answer comes here.
        var text = text
        return text.withUTF8 { bytes -> String? in
            let key = updatedAtKey
            var start = bytes.count - key.count
            while start >= 0 {
                if bytes[start] == key[0] && bytes[start + 1] == key[1] && (0..<key.count).allSatisfy({ bytes[start + $0] == key[$0] }) {
                    let value = start + key.count
                    guard let end = bytes[value...].firstIndex(of: UInt8(ascii: "\"")) else { return nil }
                    return "\"" + String(decoding: bytes[value..<end], as: UTF8.self) + "\""
                }
                start -= 1
            }
            return nil
        }
    }

    private static let updatedAtKey = Array("\"_updatedAt\":\"".utf8)

    static func etag(of entity: JSONObject?) -> String? {
        entity?["_updatedAt"]?.stringValue.map { "\"" + $0 + "\"" }
    }

    /// A JSON response for an entity, with its ETag.
    ///
    /// - Parameters:
    ///   - text: the body sent.
    ///   - stored: the entity as stored, when the body is another view of it
    ///     (references resolved into it): its ETag is the stored entity's.
    static func entityResponse(_ status: Int, _ text: String, stored: String? = nil) -> Response {
        var response = Response.json(status, text)
        if let tag = etag(ofJSON: stored ?? text) { response.headers.add("ETag", tag) }
        return response
    }

    /// Checks `If-Match` and `If-None-Match` against the entity as stored
    /// now (nil: none). 412 `PreconditionFailed`, with the current ETag.
    static func check(_ request: Request, current: JSONObject?) throws {
        let tag = etag(of: current)
        if let header = request.headers["If-Match"] {
            let wanted = try list(header, "If-Match")
            let matches = current != nil && (wanted.contains("*") || tag.map(wanted.contains) == true)
            if !matches { throw failed(tag, "The entity changed since you read it (If-Match); fetch it again and reapply your change.") }
        }
        if let header = request.headers["If-None-Match"] {
            let unwanted = try list(header, "If-None-Match")
            if current != nil && (unwanted.contains("*") || tag.map(unwanted.contains) == true) {
                throw failed(tag, "The entity already exists (If-None-Match).")
            }
        }
    }

    /// The ETags a precondition lists. Each is `*` or quoted, as the `ETag`
    /// header gave it (RFC 9110 §8.8.3): a bare `_updatedAt` is a 400 that says
    /// so, never a 412 claiming the entity changed.
    static func list(_ header: String, _ name: String) throws -> [String] {
        let tags = header.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        for tag in tags where tag != "*" {
            let opaque = tag.hasPrefix("W/") ? tag.dropFirst(2) : Substring(tag)
            guard opaque.count >= 2, opaque.hasPrefix("\""), opaque.hasSuffix("\""), !opaque.dropFirst().dropLast().contains("\"") else {
                throw HTTPError.badRequest("\(name) takes ETags in double quotes, exactly as the ETag header gave them "
                                           + "(\(name): \"2026-01-01T00:00:00.000Z\"), or *; \(tag.prefix(64)) is not quoted.")
            }
        }
        return tags
    }

    private static func failed(_ tag: String?, _ description: String) -> HTTPError {
        HTTPError(.preconditionFailed, description, headers: Headers(tag.map { [("ETag", $0)] } ?? []))
    }
}
