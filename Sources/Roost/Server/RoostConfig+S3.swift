import Files

extension RoostConfig {
    /// `files_store`: the local file store under the data directory, or an S3-compatible bucket.
    public enum FilesStore: String, Sendable, CaseIterable {
        case local
        case s3
    }

    /// Where files live when not under the data directory (`s3://bucket/prefix/`), for backups; nil for local.
    public var objectStoreLocation: String? {
        filesStore == .s3 ? "s3://\(s3.bucket)/\(S3Keys(prefix: s3.prefix).root)" : nil
    }

    /// The `s3:` mapping: endpoint, bucket, region, prefix, multipart_threshold_mib, orphan_grace_seconds, insecure_tls.
    /// Credentials are not accepted here: only from the environment.
    mutating func applyS3(_ value: Any, source: String) throws {
        guard let map = value as? [String: Any] else { throw Invalid("\(source): s3 must be a mapping") }
        for (key, item) in map {
            let text = "\(item)"
            switch key {
            case "endpoint": s3.endpoint = text
            case "bucket": s3.bucket = text
            case "region": s3.region = text
            case "prefix": s3.prefix = text
            case "multipart_threshold_mib":
                guard let mib = Int(text), (5...5120).contains(mib) else {
                    throw Invalid("\(source): s3.multipart_threshold_mib must be a whole number from 5 to 5120")
                }
                s3.multipartThreshold = mib << 20
            case "orphan_grace_seconds":
                guard let seconds = Int(text), (0...604_800).contains(seconds) else {
                    throw Invalid("\(source): s3.orphan_grace_seconds must be a whole number from 0 to 604800")
                }
                s3.orphanGraceSeconds = seconds
            case "insecure_tls":
                guard let flag = item as? Bool else { throw Invalid("\(source): s3.insecure_tls must be true or false") }
                s3.insecureTLS = flag
            case "access_key_id", "secret_access_key":
                throw Invalid("\(source): s3.\(key) is not read from files; set ROOST_S3_ACCESS_KEY_ID and ROOST_S3_SECRET_ACCESS_KEY in the environment")
            default:
                throw Invalid("\(source): s3: unknown setting \"\(key)\" (use endpoint, bucket, region, prefix, multipart_threshold_mib, orphan_grace_seconds, insecure_tls)")
            }
        }
    }

    /// `ROOST_S3_ACCESS_KEY_ID`, `ROOST_S3_SECRET_ACCESS_KEY`, and overrides
    /// `ROOST_S3_ENDPOINT`, `ROOST_S3_BUCKET`, `ROOST_S3_REGION`, `ROOST_S3_PREFIX`.
    mutating func applyS3(environment: [String: String]) throws {
        if let v = environment["ROOST_S3_ACCESS_KEY_ID"] { s3.accessKeyID = v }
        if let v = environment["ROOST_S3_SECRET_ACCESS_KEY"] { s3.secretAccessKey = v }
        if let v = environment["ROOST_S3_ENDPOINT"] { s3.endpoint = v }
        if let v = environment["ROOST_S3_BUCKET"] { s3.bucket = v }
        if let v = environment["ROOST_S3_REGION"] { s3.region = v }
        if let v = environment["ROOST_S3_PREFIX"] { s3.prefix = v }
    }
}
