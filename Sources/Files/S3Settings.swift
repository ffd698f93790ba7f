import Foundation

/// Where `files_store: s3` keeps files: an S3-compatible endpoint, a bucket
/// (path-style URLs, `endpoint/bucket/key`), a region for SigV4 and an
/// optional key prefix. Credentials come only from the environment.
public struct S3Settings: Sendable, Equatable {
    public var endpoint = ""
    public var bucket = ""
    public var region = "us-east-1"
    /// Keys start with `prefix/` when set (no leading or trailing slash).
    public var prefix = ""
    /// Uploads larger than this go up in parts (multipart upload).
    public var multipartThreshold = 8 << 20
    public var accessKeyID = ""
    public var secretAccessKey = ""
    /// Skips TLS certificate checks (`insecure_tls: true`; for test endpoints only).
    public var insecureTLS = false
    /// Objects without a row are swept only when older than this, so an
    /// upload in flight on another node is never taken for an orphan.
    public var orphanGraceSeconds = 3600
    public var timeoutMs = 60_000
    public var connectTimeoutMs = 5_000

    public init() {}

    /// S3's smallest part (except the last) and largest part count.
    public static let minimumPartSize = 5 << 20
    public static let maximumParts = 10_000

    /// What is missing before the store can start, or nil.
    public var problem: String? {
        if endpoint.isEmpty { return "s3.endpoint (or ROOST_S3_ENDPOINT) is not set" }
        if !(endpoint.hasPrefix("http://") || endpoint.hasPrefix("https://")) {
            return "s3.endpoint must start with http:// or https://"
        }
        if bucket.isEmpty { return "s3.bucket (or ROOST_S3_BUCKET) is not set" }
        if !S3Keys.isValidBucket(bucket) { return "s3.bucket \"\(bucket)\" is not a valid bucket name" }
        if accessKeyID.isEmpty || secretAccessKey.isEmpty {
            return "ROOST_S3_ACCESS_KEY_ID and ROOST_S3_SECRET_ACCESS_KEY must be set in the environment"
        }
        return nil
    }

    /// The size of every part but the last for an upload of `total` bytes:
    /// the threshold (at least S3's 5 MiB), larger when 10,000 parts would not hold it.
    public func partSize(for total: Int) -> Int {
        let base = max(multipartThreshold, Self.minimumPartSize)
        let needed = (total + Self.maximumParts - 1) / Self.maximumParts
        return max(base, needed)
    }

    /// True when an upload of `total` bytes goes up in parts.
    public func usesMultipart(_ total: Int) -> Bool { total > multipartThreshold }
}
