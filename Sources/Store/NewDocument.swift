import JSON

/// A new document as every engine stores it: the client's fields, its
/// `_acl`, an `_id` (the client's, when the caller may choose it, else a new
/// one) and both timestamps. The engines differ only in how they write it.
public struct NewDocument: Sendable {
    public let id: String
    /// The creation time, also its first `_updatedAt`.
    public let now: String
    public let document: JSONObject

    public init(_ body: JSONObject, scope: AccessScope, ids: DocumentID) throws {
        try scope.checkCreate()
        var document = try Self.clientFields(body)
        document["_acl"] = .object(try scope.newACL(from: body["_acl"]))
        if let given = body["_id"] {
            guard case .string(let s) = given, DocumentID.isValidClientID(s) else {
                throw StoreError.invalid("_id must be a non-empty string of at most 256 characters without '/' or control characters.")
            }
            guard scope.mayChoose(id: s) else { throw StoreError.invalid(scope.idNamespaceRule) }
            id = s
        } else {
            id = ids.next()
        }
        now = Timestamp.now()
        document.prepend("_id", .string(id))
        document["_createdAt"] = .string(now)
        document["_updatedAt"] = .string(now)
        try scope.checkCreate(document: document)
        self.document = document
    }

    /// The client's fields with server-owned ones removed, after checking
    /// that no key could be mistaken for a query operator.
    public static func clientFields(_ body: JSONObject) throws -> JSONObject {
        try checkKeys(.object(body), depth: 0)
        var fields = body
        for key in ["_id", "_createdAt", "_updatedAt", "_acl"] { fields[key] = nil }
        return fields
    }

    private static func checkKeys(_ value: JSONValue, depth: Int) throws {
        switch value {
        case .object(let o):
            for (key, child) in o {
                if key.hasPrefix("$") { throw StoreError.invalid("Field names cannot start with '$' (found \"\(key)\").") }
                if key.utf8.contains(0) { throw StoreError.invalid(JSONValue.nulRefusal) }
                try checkKeys(child, depth: depth + 1)
            }
        case .array(let a):
            for child in a { try checkKeys(child, depth: depth + 1) }
        case .string(let text) where text.utf8.contains(0):
            throw StoreError.invalid(JSONValue.nulRefusal)
        default:
            return
        }
    }
}
