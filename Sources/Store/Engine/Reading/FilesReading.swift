/// File metadata.
public protocol FilesReading: AnyObject {
    func file(id: String, scope: AccessScope) throws -> String?
    func fileForServing(id: String, scope: AccessScope) throws -> StoredFileInfo?
    func pendingFileJobs(limit: Int) throws -> [FileJobRecord]
    func filePage(limit: Int, skip: Int) throws -> (documents: [String], total: Int)
    /// `creator`'s own file metadata, newest first: `limit` after the file `after`
    /// (the last `_id` of the previous page; a file not theirs gives an empty page).
    func ownFiles(creator: String, limit: Int, after: String?, scope: AccessScope) throws -> [String]
}
