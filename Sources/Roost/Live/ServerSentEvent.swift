import EventLoop
import JSON

/// One Server-Sent Event as bytes on the wire (`id`, `event`, `data`, blank line).
enum ServerSentEvent {
    enum Kind: String {
        case create, update, delete, enter, leave, reset
    }

    /// `data` is one line of JSON, so it needs no splitting.
    static func encode(id: String?, kind: Kind, data: String) -> [UInt8] {
        var text = ""
        if let id { text += "id: \(id)\n" }
        text += "event: \(kind.rawValue)\ndata: \(data)\n\n"
        return Array(text.utf8)
    }

    /// The data of an entity event: `{"collection", "_id", "entity"}` (no entity for delete and leave).
    static func data(collection: String, id: String, entity: String?) -> String {
        var text = "{\"collection\":\(JSONWriter.quoted(collection)),\"_id\":\(JSONWriter.quoted(id))"
        if let entity { text += ",\"entity\":" + entity }
        return text + "}"
    }

    /// The first bytes of every stream: how long a client waits before reconnecting.
    static func preamble(retryMilliseconds: Int) -> [UInt8] { Array("retry: \(retryMilliseconds)\n\n".utf8) }

    /// A comment line that keeps idle connections (and proxies) awake; one
    /// object for every stream, so streams whose round holds it and the same
    /// events still share one chunk.
    static let heartbeat = SharedBytes(Array(": heartbeat\n\n".utf8))
}
