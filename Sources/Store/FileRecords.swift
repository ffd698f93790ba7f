import JSON

/// A thumbnail job waiting in `_file_jobs`.
public struct FileJobRecord: Sendable {
    public let fileID: String
    public let contentType: String

    public init(fileID: String, contentType: String) {
        self.fileID = fileID
        self.contentType = contentType
    }
}

/// The fields of a file's metadata that serving its bytes needs.
public struct StoredFileInfo: Sendable {
    public let contentType: String
    public let size: Int
    public let sha256: String
    public let name: String?
    public let isImage: Bool

    public init(contentType: String, size: Int, sha256: String, name: String?, isImage: Bool) {
        self.contentType = contentType
        self.size = size
        self.sha256 = sha256
        self.name = name
        self.isImage = isImage
    }
}
