import Foundation
import Files
@testable import Roost
import Testing

/// `files_store` and the `s3:` mapping: YAML, environment overrides, and
/// credentials only from the environment.
@Suite struct S3ConfigTests {
    @Test func localIsTheDefault() throws {
        let config = try RoostConfig.loaded("")
        #expect(config.filesStore == .local && config.objectStoreLocation == nil)
    }

    @Test func readsTheMappingAndTheEnvironment() throws {
        let config = try RoostConfig.loaded("""
            files_store: s3
            s3: {endpoint: "https://s3.example", bucket: roost-files, region: eu-west-1, prefix: app, multipart_threshold_mib: 16}
            """, env: ["ROOST_S3_ACCESS_KEY_ID": "AKIA", "ROOST_S3_SECRET_ACCESS_KEY": "secret", "ROOST_S3_BUCKET": "other-bucket"])
        #expect(config.filesStore == .s3)
        #expect(config.s3.endpoint == "https://s3.example" && config.s3.region == "eu-west-1" && config.s3.prefix == "app")
        #expect(config.s3.bucket == "other-bucket", "the environment overrides the file")
        #expect(config.s3.multipartThreshold == 16 << 20)
        #expect(config.s3.accessKeyID == "AKIA" && config.s3.secretAccessKey == "secret")
        #expect(config.s3.problem == nil)
        #expect(config.objectStoreLocation == "s3://other-bucket/app/")
    }

    @Test func refusesCredentialsInTheFileAndBadValues() throws {
        #expect(throws: RoostConfig.Invalid.self) { try RoostConfig.loaded("s3: {secret_access_key: x}") }
        #expect(throws: RoostConfig.Invalid.self) { try RoostConfig.loaded("s3: {multipart_threshold_mib: 4}") }
        #expect(throws: RoostConfig.Invalid.self) { try RoostConfig.loaded("s3: {bucket_name: x}") }
        #expect(throws: RoostConfig.Invalid.self) { try RoostConfig.loaded("files_store: gcs") }
    }

    @Test func namesWhatIsMissing() throws {
        let config = try RoostConfig.loaded("files_store: s3\ns3: {endpoint: 'http://127.0.0.1:9000', bucket: roost}")
        #expect(config.s3.problem?.contains("ROOST_S3_ACCESS_KEY_ID") == true)
        #expect(try RoostConfig.loaded("files_store: s3").s3.problem?.contains("s3.endpoint") == true)
    }
}
