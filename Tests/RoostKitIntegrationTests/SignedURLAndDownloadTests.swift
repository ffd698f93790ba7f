import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import RoostKit

/// Signed file URLs (what `AsyncImage` loads) and the download queue against a real roostd.
extension AgainstRoostd {
    @Suite("Signed URLs and downloads") struct SignedURLsAndDownloads {
        static let privateFiles = Fixture.config.replacingOccurrences(of: "files_permission: shared", with: "files_permission: private")
            + "\nmax_upload_bytes: 8388608\n"

        /// A GET with no session at all, as `AsyncImage` or a browser sends it.
        static func plainGet(_ url: URL) async throws -> (Data, HTTPURLResponse) {
            let (data, response) = try await URLSession(configuration: .ephemeral).data(from: url)
            return (data, response as! HTTPURLResponse)
        }

        @Test("a private file and its thumbnail load by signed URL without a header; a stranger gets none; it expires")
        func signedURLs() async throws {
            let fx = try Fixture(config: Self.privateFiles)
            let alice = try await fx.user("alice")
            let meta = try await alice.files.upload(TestImages.png, contentType: "image/png")
            let (_, unsigned) = try await Self.plainGet(alice.files.url(of: meta.id))
            #expect(unsigned.statusCode == 401 || unsigned.statusCode == 404)

            let url = try await alice.files.signedURL(of: meta.id)
            #expect(url.absoluteString.hasPrefix(fx.baseURL.absoluteString + "/files/\(meta.id)?expires="))
            let (data, response) = try await Self.plainGet(url)
            #expect(response.statusCode == 200 && data == TestImages.png)
            #expect(response.value(forHTTPHeaderField: "Cache-Control")?.hasPrefix("private, max-age=") == true)

            let thumb = try await alice.files.signedURL(of: meta.id, thumbnailSize: 8)
            let (small, thumbResponse) = try await Self.plainGet(thumb)
            #expect(thumbResponse.statusCode == 200 && !small.isEmpty && small != TestImages.png)
            #expect(thumbResponse.value(forHTTPHeaderField: "Content-Type") == "image/webp")

            let bob = try await fx.user("bob")
            let refused = await #expect(throws: RoostError.self) { try await bob.files.signedURL(of: meta.id) }
            #expect(refused?.code == .notFound)

            let brief = try await alice.files.signed(meta.id, ttl: 1)
            #expect(brief.expiresAt.timeIntervalSinceNow <= 1.5)
            try await Task.sleep(nanoseconds: 2_200_000_000)
            let (body, expired) = try await Self.plainGet(brief.url)
            #expect(expired.statusCode == 403)
            #expect(String(decoding: body, as: UTF8.self).contains("\"SignedURLExpired\""))
        }

        @Test("the download queue waits offline, then fills the cache localURL reads; a private file a stranger queues fails")
        func queueOfflineThenOnline() async throws {
            let fx = try Fixture(config: Self.privateFiles)
            let transport = SwitchableTransport()
            let alice = try await fx.user("alice", transport: transport)
            let meta = try await alice.files.upload(TestImages.png, contentType: "image/png")
            let cache = fx.scratch.appendingPathComponent("cache")
            let queue = try FileDownloadQueue(client: alice, directory: fx.scratch.appendingPathComponent("downloads"), cache: cache,
                                              automatic: false)
            transport.online = false
            let original = try queue.enqueue(meta.id)
            let thumb = try queue.enqueue(meta.id, thumbnailSize: 8)
            #expect(await queue.sendPending().remaining == 2)
            transport.online = true
            let report = await queue.sendPending()
            #expect(report.downloaded == [original.id, thumb.id])
            let url = try await queue.downloaded(original.id)
            #expect(try Data(contentsOf: url) == TestImages.png)
            #expect(try await alice.files.localURL(of: meta.id, in: cache) == url)
            #expect(try await alice.files.localURL(of: meta.id, thumbnailSize: 8, in: cache) == queue.downloaded(thumb.id))

            let bob = try await fx.user("bob")
            let theirs = try FileDownloadQueue(client: bob, directory: fx.scratch.appendingPathComponent("bob"), cache: fx.scratch.appendingPathComponent("bobcache"),
                                               automatic: false)
            let denied = try theirs.enqueue(meta.id)
            #expect(await theirs.sendPending().failed == [denied.id])
            guard case .failed(404, "NotFound", _)? = theirs.item(denied.id)?.state else { Issue.record("not refused"); return }
        }

        @Test("a cut-short download resumes with a real Range request through URLSession, progress counting what was there")
        func resumesThroughURLSession() async throws {
            let fx = try Fixture(config: Self.privateFiles)
            let alice = try await fx.user("alice")
            var generator = SystemRandomNumberGenerator()
            let big = Data((0..<2_000_000).map { _ in UInt8.random(in: 0...255, using: &generator) })
            let meta = try await alice.files.upload(big, contentType: "application/octet-stream")
            let queue = try FileDownloadQueue(client: alice, directory: fx.scratch.appendingPathComponent("downloads"),
                                              cache: fx.scratch.appendingPathComponent("cache"), automatic: false)
            let item = try queue.enqueue(meta.id)
            // What an earlier attempt left: the first 700 000 bytes. Zeros stand for them, so the result
            // shows they were kept and only the rest was fetched.
            try Data(count: 700_000).write(to: queue.partialURL(item.id))
            let events = queue.events()
            #expect(await queue.sendPending().downloaded == [item.id])
            let url = try await queue.downloaded(item.id)
            #expect(try Data(contentsOf: url) == Data(count: 700_000) + big.suffix(from: 700_000))
            var last: TransferProgress?
            for await event in events {
                if case .progress(item.id, let p) = event { last = p }
                if case .downloaded = event { break }
            }
            #expect(last == TransferProgress(completed: Int64(big.count), total: Int64(big.count)))
        }
    }
}
