import HTTP
import JSON
import Store

/// roost.get, find and count on a reader, with the rights of `principal`:
/// rows it may not read are never seen, private user fields stay hidden,
/// and filters may not name them (as for a client's list).
enum ScriptReads {
    static func get(_ reader: any DocumentsReading, _ access: AccessPolicy, _ collection: String, _ id: String,
                    _ principal: AccessScope.Principal, _ roles: [String]) throws -> JSONValue? {
        let scope = access.scope(principal, roles: roles, in: collection)
        guard let text = try reader.get(collection, id: id, scope: scope, redaction: access.redaction(collection, principal)) else { return nil }
        return try JSONParser.parse(text)
    }

    static func find(_ reader: any DocumentsReading, _ access: AccessPolicy, _ collection: String, filter: JSONValue,
                     sort: JSONValue?, limit: Int, _ principal: AccessScope.Principal, _ roles: [String]) throws -> [JSONValue] {
        let order = try sortSpec(sort)
        try access.checkHiddenFields(collection, principal, filter: filter, sort: order.map(\.field))
        let query = FindQuery(filter: filter, sort: order, limit: limit)
        return try reader.find(collection, query, scope: access.scope(principal, roles: roles, in: collection),
                               redaction: access.redaction(collection, principal)).map { try JSONParser.parse($0) }
    }

    static func count(_ reader: any DocumentsReading, _ access: AccessPolicy, _ collection: String, filter: JSONValue,
                      _ principal: AccessScope.Principal, _ roles: [String]) throws -> Int {
        try access.checkHiddenFields(collection, principal, filter: filter, sort: [])
        return try reader.count(collection, filter: filter, scope: access.scope(principal, roles: roles, in: collection))
    }

    /// `{field = 1}` (one field: a Lua table has no order) or `{{"price", -1}, {"name", 1}}`.
    static func sortSpec(_ value: JSONValue?) throws -> [(field: String, ascending: Bool)] {
        switch value {
        case nil, .null?: return []
        case .array(let pairs)?:
            return try pairs.map { pair in
                guard case .array(let p) = pair, p.count == 2, case .string(let field) = p[0],
                      let direction = p[1].doubleValue, direction == 1 || direction == -1 else {
                    throw HTTPError(.invalidQuery, "sort must be {field = 1} or a list of {\"field\", 1 or -1} pairs.")
                }
                _ = try FieldPath(field)
                return (field, direction == 1)
            }
        case .object(let o)? where o.count <= 1:
            return try FindQuery.parseSort(.object(o))
        default:
            throw HTTPError(.invalidQuery, "sort on several fields must be a list of {\"field\", 1 or -1} pairs (a table has no order).")
        }
    }
}

/// roost.webhook and roost.push: events in the durable outbox, in the same
/// transaction as the writes around them (delivered after COMMIT, retried).
enum ScriptOutbox {
    /// Script events are `script.<event>`; endpoints subscribe to that type (or `*`).
    static func webhook(_ writer: any WebhooksWriting, _ event: String, _ data: JSONValue) throws {
        guard event.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" || $0 == "." }) else {
            throw HTTPError(.invalidDocument, "An event name is letters, digits, '.', '_' and '-'.")
        }
        _ = try writer.enqueueEvent(type: "script." + event, data: data.jsonText)
    }

    /// A `push.notification` event for the user's devices (the push/outbox path the
    /// built-in `message.created` events take; a push provider endpoint delivers it).
    static func push(_ writer: any WebhooksWriting & PushWriting, _ userID: String, _ notification: JSONObject) throws {
        guard try writer.hasSubscribers(pushEvent) else { return }
        let devices = try writer.devices(userIDs: [userID]).map { d -> JSONValue in
            .object(JSONObject([("platform", .string(d.platform)), ("token", .string(d.token))]))
        }
        var recipient = JSONObject()
        recipient["_id"] = .string(userID)
        recipient["devices"] = .array(devices)
        var data = JSONObject()
        data["notification"] = .object(notification)
        data["recipients"] = .array([.object(recipient)])
        _ = try writer.enqueueEvent(type: pushEvent, data: data.jsonText)
    }

    static let pushEvent = "push.notification"
}
