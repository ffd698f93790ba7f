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
        guard let key = text.range(of: "\"_updatedAt\":\"", options: .backwards),
              let end = text[key.upperBound...].firstIndex(of: "\"") else { return nil }
        return "\"" + text[key.upperBound..<end] + "\""
    }

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
            let wanted = list(header)
            let matches = current != nil && (wanted.contains("*") || tag.map(wanted.contains) == true)
            if !matches { throw failed(tag, "The entity changed since you read it (If-Match); fetch it again and reapply your change.") }
        }
        if let header = request.headers["If-None-Match"] {
            let unwanted = list(header)
            if current != nil && (unwanted.contains("*") || tag.map(unwanted.contains) == true) {
                throw failed(tag, "The entity already exists (If-None-Match).")
            }
        }
    }

    private static func list(_ header: String) -> [String] {
        header.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    private static func failed(_ tag: String?, _ description: String) -> HTTPError {
        HTTPError(.preconditionFailed, description, headers: Headers(tag.map { [("ETag", $0)] } ?? []))
    }
}
