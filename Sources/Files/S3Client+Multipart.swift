import Foundation

/// Multipart upload: initiate, the parts (each signed with its own payload
/// hash), complete; abort on any failure so no parts linger in the bucket.
extension S3Client {
    /// The byte ranges of each part of an upload of `total` bytes.
    public static func parts(total: Int, partSize: Int) -> [Range<Int>] {
        stride(from: 0, to: total, by: partSize).map { $0..<min(total, $0 + partSize) }
    }

    func putInParts(_ key: String, _ bytes: [UInt8], contentType: String) throws {
        let started = try perform("CreateMultipartUpload", "POST", key: key, query: [("uploads", "")],
                                  headers: ["Content-Type: " + contentType])
        guard started.ok, let uploadID = S3XML.value("UploadId", in: started.body), !uploadID.isEmpty else {
            throw failure("CreateMultipartUpload", started)
        }
        do {
            var etags: [String] = []
            let ranges = Self.parts(total: bytes.count, partSize: settings.partSize(for: bytes.count))
            try bytes.withUnsafeBytes { all in
                for (index, range) in ranges.enumerated() {
                    let part = UnsafeRawBufferPointer(rebasing: all[range])
                    let reply = try perform("UploadPart", "PUT", key: key, query: [("partNumber", "\(index + 1)"), ("uploadId", uploadID)],
                                            headers: ["Content-Type: application/octet-stream"], body: part)
                    guard reply.ok, !reply.etag.isEmpty else { throw failure("UploadPart", reply) }
                    etags.append(reply.etag)
                }
            }
            let xml = Array(S3XML.completion(etags: etags).utf8)
            let done = try xml.withUnsafeBytes {
                try perform("CompleteMultipartUpload", "POST", key: key, query: [("uploadId", uploadID)],
                            headers: ["Content-Type: application/xml"], body: $0)
            }
            // S3 may answer 200 with an <Error> body when completion fails late.
            guard done.ok, S3XML.value("Code", in: done.body) == nil else { throw failure("CompleteMultipartUpload", done) }
        } catch {
            _ = try? perform("AbortMultipartUpload", "DELETE", key: key, query: [("uploadId", uploadID)])
            throw error
        }
    }
}
