import JSON

/// A stored file's metadata document (`_files.doc`, `GET /files/:id/meta`):
/// its JSON shape is written here and read by these names only, by the
/// upload and thumbnail code and by the SQL that serves the file.
///
/// `{"contentType", "size", "sha256", "name"?, "width"?, "height"?,
/// "thumbnails"?: {"<size>": ThumbnailState}, "url"}`; the store adds
/// `_id`, `_acl` and the timestamps.
public struct FileMetadata: Sendable {
    /// The document's field names.
    public enum Key {
        public static let contentType = "contentType", size = "size", sha256 = "sha256", name = "name"
        public static let width = "width", height = "height", thumbnails = "thumbnails", url = "url"
    }

    public var contentType: String
    public var size: Int
    public var sha256: String
    public var name: String?
    /// Images only: their pixel size.
    public var dimensions: (width: Int, height: Int)?
    /// Images only: each configured thumbnail size (as text, e.g. "128") and its state.
    public var thumbnails: [(size: String, state: ThumbnailState)]
    public var url: String

    public init(contentType: String, size: Int, sha256: String, name: String?, dimensions: (width: Int, height: Int)?,
                thumbnails: [(size: String, state: ThumbnailState)], url: String) {
        self.contentType = contentType
        self.size = size
        self.sha256 = sha256
        self.name = name
        self.dimensions = dimensions
        self.thumbnails = thumbnails
        self.url = url
    }

    /// The metadata as its JSON document.
    public var document: JSONObject {
        var doc = JSONObject()
        doc[Key.contentType] = .string(contentType)
        doc[Key.size] = .int(Int64(size))
        doc[Key.sha256] = .string(sha256)
        if let name { doc[Key.name] = .string(name) }
        if let dimensions {
            doc[Key.width] = .int(Int64(dimensions.width))
            doc[Key.height] = .int(Int64(dimensions.height))
            var thumbs = JSONObject()
            for t in thumbnails { thumbs[t.size] = t.state.json }
            doc[Key.thumbnails] = .object(thumbs)
        }
        doc[Key.url] = .string(url)
        return doc
    }

    /// A JSON path into the document, for SQL (`$.contentType`).
    package static func path(_ key: String) -> String { "$." + key }
}

/// One thumbnail size's entry in `FileMetadata.thumbnails`.
public enum ThumbnailState: Sendable, Equatable {
    case pending(url: String)
    case ready(contentType: String, width: Int, height: Int, size: Int, url: String, madeAt: String)
    case failed(error: String)

    static let stateKey = "state"

    public var json: JSONValue {
        var t = JSONObject()
        switch self {
        case .pending(let url):
            t[Self.stateKey] = .string("pending")
            t["url"] = .string(url)
        case .ready(let contentType, let width, let height, let size, let url, let madeAt):
            t[Self.stateKey] = .string("ready")
            t["contentType"] = .string(contentType)
            t["width"] = .int(Int64(width))
            t["height"] = .int(Int64(height))
            t["size"] = .int(Int64(size))
            t["url"] = .string(url)
            t["madeAt"] = .string(madeAt)
        case .failed(let error):
            t[Self.stateKey] = .string("failed")
            t["error"] = .string(error)
        }
        return .object(t)
    }

    /// True when a stored entry (or its absence) still waits for its thumbnail.
    public static func isPending(_ entry: JSONValue?) -> Bool {
        (entry?.objectValue?[stateKey]?.stringValue ?? "pending") == "pending"
    }
}
