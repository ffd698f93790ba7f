import HTTP
import JSON

/// The answer of a `POST /_batch`, kept to about the size of what changed
/// rather than a multiple of it: 100 operations on one large entity answer
/// with that entity once.
///
/// Each result is `{"status", "etag", "body"}`. A result's body is left out
/// (`"body": null`, `"omitted"` saying why) when
/// - a later operation of the batch changed the same entity (`"superseded"`:
///   the later result carries it), or
/// - the bodies already in the answer reach `bodyBudget` (`"size"`: read the
///   entity with a GET; its `etag` says which state the batch left).
/// Bodies are dropped as they are superseded, so the writer never holds more
/// than the budget plus one entity.
struct BatchAnswer {
    /// Bytes of entity bodies one answer carries at most (8 MiB).
    static let bodyBudget = 8 << 20

    private struct Result {
        let status: Int
        let etag: String?
        var body: String?
        var omitted: String?
    }

    private var results: [Result] = []
    /// The index of the result that carries each entity's body (key: collection NUL id).
    private var carrier: [String: Int] = [:]
    private var bodyBytes = 0

    mutating func add(_ response: Response, entity: String?) {
        if let entity, let earlier = carrier[entity], let dropped = results[earlier].body {
            bodyBytes -= dropped.utf8.count
            results[earlier].body = nil
            results[earlier].omitted = "superseded"
        }
        let text = String(decoding: response.body, as: UTF8.self)
        var result = Result(status: response.status, etag: response.headers["ETag"], body: text.isEmpty ? nil : text)
        if let body = result.body {
            if bodyBytes + body.utf8.count > Self.bodyBudget {
                result.body = nil
                result.omitted = "size"
            } else {
                bodyBytes += body.utf8.count
                if let entity { carrier[entity] = results.count }
            }
        }
        results.append(result)
    }

    var jsonText: String {
        var out = "{\"results\":["
        out.reserveCapacity(bodyBytes + results.count * 64)
        for (index, result) in results.enumerated() {
            if index > 0 { out += "," }
            out += "{\"status\":\(result.status)"
            if let etag = result.etag { out += ",\"etag\":" + JSONValue.string(etag).jsonText }
            out += ",\"body\":" + (result.body ?? "null")
            if let omitted = result.omitted { out += ",\"omitted\":\"\(omitted)\"" }
            out += "}"
        }
        return out + "]}"
    }
}
