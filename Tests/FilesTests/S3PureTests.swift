import Foundation
@testable import Files
import Testing

/// The parts of the S3 store that need no bucket: key layout, part sizing,
/// URL canonical form, XML answers and the orphan plan of the sweep.
@Suite struct S3PureTests {
    let id = "6b021b262dbb8361c1b82a1c"

    @Test func keysSitBesideEachOtherUnderThePrefix() {
        let keys = S3Keys(prefix: "/apps/tour/")
        #expect(keys.original(id) == "apps/tour/\(id)/original")
        #expect(keys.thumbnail(id, name: "128.webp") == "apps/tour/\(id)/thumb/128.webp")
        #expect(keys.id(of: "apps/tour/\(id)/thumb/128.webp") == id)
        #expect(keys.id(of: "apps/tour/notes.txt") == nil)
        #expect(keys.id(of: "other/\(id)/original") == nil)
        #expect(S3Keys(prefix: "").original(id) == "\(id)/original")
    }

    @Test func bucketNames() {
        #expect(S3Keys.isValidBucket("roost-files.eu"))
        #expect(!S3Keys.isValidBucket("Roost"))
        #expect(!S3Keys.isValidBucket("ab"))
        #expect(!S3Keys.isValidBucket("-roost"))
    }

    @Test func partsAreTheThresholdUntilTenThousandWouldNotHoldTheFile() {
        var s = S3Settings()
        #expect(s.partSize(for: 20 << 20) == 8 << 20)
        #expect(!s.usesMultipart(8 << 20) && s.usesMultipart((8 << 20) + 1))
        s.multipartThreshold = 1 << 20
        #expect(s.partSize(for: 20 << 20) == S3Settings.minimumPartSize, "never below S3's 5 MiB")
        let huge = 100_000 << 20
        #expect(s.partSize(for: huge) * S3Settings.maximumParts >= huge)
        let parts = S3Client.parts(total: (10 << 20) + 3, partSize: 5 << 20)
        #expect(parts == [0..<(5 << 20), (5 << 20)..<(10 << 20), (10 << 20)..<((10 << 20) + 3)])
    }

    @Test func queryIsSortedAndEncodedForSigV4() {
        var s = S3Settings()
        s.endpoint = "http://127.0.0.1:9000/"
        s.bucket = "roost"
        let client = S3Client(settings: s)
        #expect(client.url("a b/original", [("uploadId", "x/y=z"), ("partNumber", "2")])
            == "http://127.0.0.1:9000/roost/a%20b/original?partNumber=2&uploadId=x%2Fy%3Dz")
        #expect(client.url("", [("prefix", "p/"), ("list-type", "2")]) == "http://127.0.0.1:9000/roost/?list-type=2&prefix=p%2F")
    }

    @Test func readsListingsAndErrors() {
        let page = """
        <ListBucketResult><IsTruncated>true</IsTruncated><Contents><Key>p/\(id)/original</Key>\
        <LastModified>2026-11-24T05:23:58.000Z</LastModified></Contents><Contents><Key>a&amp;b</Key>\
        <LastModified>2026-11-24T05:23:59Z</LastModified></Contents><NextContinuationToken>t1</NextContinuationToken></ListBucketResult>
        """
        let listing = S3XML.listing(page)
        #expect(listing.map(\.key) == ["p/\(id)/original", "a&b"])
        #expect(listing[0].modified == Date(timeIntervalSince1970: 1795497838))
        #expect(S3XML.value("NextContinuationToken", in: page) == "t1")
        #expect(S3XML.value("Code", in: "<Error><Code>NoSuchBucket</Code></Error>") == "NoSuchBucket")
        #expect(S3XML.completion(etags: ["\"e1\""]) == "<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>&quot;e1&quot;</ETag></Part></CompleteMultipartUpload>")
    }

    @Test func theSweepTakesOnlyOldObjectsOfIdsWithoutRows() {
        let keys = S3Keys(prefix: "p")
        let kept = "6b021b262dbb8361c1b82a1d", young = "6b021b262dbb8361c1b82a1e"
        let now = Date(timeIntervalSince1970: 2_000_000_000), old = now.addingTimeInterval(-7200)
        let objects: [(key: String, modified: Date)] = [
            (keys.original(id), old), (keys.thumbnail(id, name: "128.webp"), old),
            (keys.original(kept), old), (keys.original(young), now.addingTimeInterval(-60)), ("p/readme.txt", old),
        ]
        let plan = S3ObjectStore.orphans(objects, rows: [kept], keys: keys, now: now, grace: 3600)
        #expect(plan.doomed == [keys.original(id), keys.thumbnail(id, name: "128.webp")])
        #expect(plan.originals == [id, kept, young])
    }
}
