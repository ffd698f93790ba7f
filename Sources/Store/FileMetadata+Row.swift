import JSON

/// A file's `_files` row document, made and changed the same way on both engines.
extension FileMetadata {
    /// The file store's name in the change feed.
    public static let feedCollection = "files"

    /// The document a new file's row holds: `_id` first, `scope`'s new
    /// `_acl`, both timestamps now. 403 when `scope` may not create.
    /// - Returns: the document and the timestamp it was given.
    public func rowDocument(id: String, scope: AccessScope) throws -> (document: JSONObject, now: String) {
        try scope.checkCreate()
        var document = self.document
        document["_acl"] = .object(try scope.newACL(from: nil))
        let now = Timestamp.now()
        document.prepend("_id", .string(id))
        document["_createdAt"] = .string(now)
        document["_updatedAt"] = .string(now)
        // `collections.files.rules.create`, on the metadata as it would be stored.
        try scope.checkCreate(document: document)
        return (document, now)
    }

    /// `document` with thumbnail size `name` recorded as `state` and
    /// `_updatedAt` moved on.
    /// - Returns: the new document, the one the change feed records as
    ///   before (with the entry, without the new time), and the thumbnails.
    public static func recordingThumbnail(_ name: String, _ state: ThumbnailState, in document: JSONObject)
        -> (updated: JSONObject, previous: JSONObject, thumbnails: JSONObject) {
        var document = document
        var thumbnails = document[Key.thumbnails]?.objectValue ?? JSONObject()
        thumbnails[name] = state.json
        document[Key.thumbnails] = .object(thumbnails)
        let previous = document
        document["_updatedAt"] = .string(Timestamp.after(document["_updatedAt"]?.stringValue))
        return (document, previous, thumbnails)
    }
}
