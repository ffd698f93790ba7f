import Foundation
import JSON
import Store
@testable import StorePostgres

/// The files, references and row methods both writers share, with
/// `DocumentWriter`'s exact signatures: both engines conform below, so a
/// signature that drifts on either side stops the build. The differential
/// tests run one script through it against both engines.
protocol FilesAndReferencesWriting: AnyObject {
    associatedtype Row
    var references: ReferenceSchema { get }
    func newID() -> String
    func insert(into collection: String, _ body: JSONObject, scope: AccessScope) throws -> String
    func existingRow(in collection: String, id: String, scope: AccessScope) throws -> Row?
    func replaceableRow(in collection: String, id: String, scope: AccessScope) throws -> Row?
    func replace(in collection: String, id: String, _ body: JSONObject, scope: AccessScope) throws -> (created: Bool, text: String)
    func replace(in collection: String, id: String, _ body: JSONObject, existing: Row?, scope: AccessScope) throws -> (created: Bool, text: String)
    func patch(in collection: String, id: String, _ patch: JSONObject, scope: AccessScope) throws -> String
    func patch(in collection: String, id: String, _ patch: JSONObject, existing: Row?, scope: AccessScope) throws -> String
    func delete(from collection: String, id: String, scope: AccessScope) throws
    func delete(from collection: String, id: String, existing: Row?) throws
    func document(in collection: String, id: String) throws -> String?

    func applyReferences(_ schema: ReferenceSchema) throws
    func referrerCounts(to collection: String, id: String) throws -> [(collection: String, field: String, count: Int)]
    func referrers(to collection: String, id: String, from: String, field: String) throws -> [String]
    func deferringReferenceChecks<T>(_ body: () throws -> T) throws -> T
    func danglingReferences() throws -> [DanglingReference]

    func insertFile(id: String, metadata: FileMetadata, thumbnailJob: Bool, scope: AccessScope) throws -> String
    func deleteFile(id: String, scope: AccessScope) throws
    func recordThumbnail(id: String, name: String, state: ThumbnailState, sizes: [String]) throws -> Bool
    func allFileIDs() throws -> Set<String>
    func removeFileRows(_ ids: [String]) throws
    func pendingFileJobs(limit: Int) throws -> [FileJobRecord]
    func transaction<T>(_ body: () throws -> T) throws -> T

    /// One operation in its own group commit (test helper: the batch closure's type differs per engine).
    func one<T>(_ operation: @escaping (Self) throws -> T) -> Result<T, any Error>
}

/// The reader's side of the same contract.
protocol FilesAndReferencesReading: AnyObject {
    func get(_ collection: String, id: String, scope: AccessScope, redaction: Redaction?) throws -> String?
    func find(_ collection: String, _ query: FindQuery, scope: AccessScope, redaction: Redaction?) throws -> [String]
    func page(_ collection: String, _ query: FindQuery, withTotal: Bool, scope: AccessScope, redaction: Redaction?) throws -> ListPage
    func explain(_ collection: String, _ query: FindQuery, scope: AccessScope) throws -> JSONValue
    func plan(_ collection: String, filter: JSONValue) throws -> [String]
    func file(id: String, scope: AccessScope) throws -> String?
    func fileForServing(id: String, scope: AccessScope) throws -> StoredFileInfo?
    func pendingFileJobs(limit: Int) throws -> [FileJobRecord]
    func filePage(limit: Int, skip: Int) throws -> (documents: [String], total: Int)
    func danglingReferences(_ schema: ReferenceSchema) throws -> [DanglingReference]
}

extension DocumentWriter: FilesAndReferencesWriting {
    func one<T>(_ operation: @escaping (DocumentWriter) throws -> T) -> Result<T, any Error> { commitBatch([operation])[0] }
}

extension PostgresDocumentWriter: FilesAndReferencesWriting {
    func one<T>(_ operation: @escaping (PostgresDocumentWriter) throws -> T) -> Result<T, any Error> { commitBatch([operation])[0] }
}

extension DocumentReader: FilesAndReferencesReading {}
extension PostgresDocumentReader: FilesAndReferencesReading {}

/// An outcome as comparable text: timestamps (which differ by when each
/// engine ran) replaced, errors by type and message.
func outcome<T>(_ result: Result<T, any Error>, _ show: (T) -> String = { "\($0)" }) -> String {
    switch result {
    case .success(let value): return "ok " + withoutTimestamps(show(value))
    case .failure(let error): return "\(type(of: error)): \(error)"
    }
}

func outcome<T>(_ body: () throws -> T, _ show: (T) -> String = { "\($0)" }) -> String {
    outcome(Result { try body() }, show)
}

func withoutTimestamps(_ text: String) -> String {
    text.replacingOccurrences(of: #"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z"#, with: "<time>", options: .regularExpression)
}

/// A mutable value handed between test threads (each side touches it only
/// before a semaphore signal or after a wait).
final class Shared<T>: @unchecked Sendable {
    var value: T
    init(_ value: T) { self.value = value }
}
