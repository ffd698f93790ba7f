/// File metadata rows and their thumbnail jobs.
public protocol FilesWriting: AnyObject {
    func insertFile(id: String, metadata: FileMetadata, thumbnailJob: Bool, scope: AccessScope) throws -> String
    func deleteFile(id: String, scope: AccessScope) throws
    func recordThumbnail(id: String, name: String, state: ThumbnailState, sizes: [String]) throws -> Bool
    func allFileIDs() throws -> Set<String>
    func removeFileRows(_ ids: [String]) throws
    func pendingFileJobs(limit: Int) throws -> [FileJobRecord]
}
