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
        var document = try DocumentWriter.clientFields(body)
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
        self.document = document
    }
}
