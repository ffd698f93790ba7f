import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import RoostKit

/// The upload queue and transfers with progress against a real roostd:
/// offline, lost answers, relaunches, refusals, and cached image files.
extension AgainstRoostd {
    @Suite("File transfers") struct FileTransfers {
        /// The caller's files on the server, by a fresh look.
        static func serverFiles(_ client: RoostClient) async throws -> [FileMeta] {
            try await client.files.mine(limit: 1000).files
        }

        @Test("your own files, newest first, page by page; the member directory page by page")
        func paging() async throws {
            let fx = try Fixture()
            let alice = try await fx.user("alice")
            var ids: [String] = []
            for i in 0..<5 { ids.append(try await alice.files.upload(Data("file \(i)".utf8), contentType: "text/plain").id) }
            var seen: [String] = []
            var after: String?
            repeat {
                let page = try await alice.files.mine(limit: 2, after: after)
                #expect(page.files.count <= 2)
                seen += page.files.map(\.id)
                after = page.next
            } while after != nil
            #expect(seen == ids.reversed())
            #expect(try await fx.user("bob").files.mine().files.isEmpty, "only your own")

            for name in ["carol", "dave", "erin"] { _ = try await fx.user(name) }
            var users: [String] = []
            var query = Query().sorted(by: "username").limit(2)
            repeat {
                let page = try await alice.usersPage(query)
                users += page.users.map(\.username)
                query = query.after(page.next)
            } while query.after != nil
            #expect(users.count == 5 && users == users.sorted())
        }

        @Test("uploads queued offline wait, then go when online, in order; events report them")
        func offlineThenOnline() async throws {
            let fx = try Fixture()
            let transport = SwitchableTransport()
            let alice = try await fx.user("alice", transport: transport)
            let queue = try FileUploadQueue(client: alice, directory: fx.scratch.appendingPathComponent("uploads"), automatic: false)
            let events = queue.events()
            transport.online = false
            let photo = try queue.enqueue(TestImages.png, contentType: "image/png", name: "photo.png")
            let note = try queue.enqueue(Data("offline note".utf8), contentType: "text/plain")
            let offline = await queue.sendPending()
            #expect(offline.remaining == 2 && offline.uploaded.isEmpty)
            #expect(queue.items.map(\.state) == [.queued, .queued])

            transport.online = true
            #expect(try await Self.serverFiles(alice).isEmpty)
            let online = await queue.sendPending()
            #expect(online.uploaded == [photo.id, note.id] && online.remaining == 0)
            guard case .uploaded(let meta)? = queue.item(photo.id)?.state else { Issue.record("not uploaded"); return }
            #expect(meta.contentType == "image/png" && meta.width == 16)
            #expect(try await alice.files.download(meta.id) == TestImages.png)
            #expect(try await queue.uploaded(note.id).size == 12)
            #expect(try await Self.serverFiles(alice).count == 2)
            // The spooled bytes are gone once stored; the records stay until removed.
            #expect(!FileManager.default.fileExists(atPath: queue.bytesURL(photo.id).path))
            #expect(queue.remove(photo.id) && queue.item(photo.id) == nil)

            var seen: [FileUploadQueue.Event] = []
            for await event in events {
                seen.append(event)
                if seen.filter({ if case .uploaded = $0 { return true }; return false }).count == 2 { break }
            }
            #expect(seen.first == .queued(photo.id))
            #expect(seen.contains { if case .progress(note.id, let p) = $0 { return p.completed == 12 }; return false })
        }

        @Test("an upload whose answer was lost is found on the server, not stored twice; a relaunch resumes the queue")
        func lostAnswerAndRelaunch() async throws {
            let fx = try Fixture()
            let transport = SwitchableTransport()
            let alice = try await fx.user("alice", transport: transport)
            let dir = fx.scratch.appendingPathComponent("uploads")
            var queue: FileUploadQueue? = try FileUploadQueue(client: alice, directory: dir, automatic: false)
            let first = try queue!.enqueue(Data("stored once".utf8), contentType: "text/plain")
            transport.loseAnswers = 1
            let lost = await queue!.sendPending()
            #expect(lost.remaining == 1 && lost.uploaded.isEmpty)
            #expect(try await Self.serverFiles(alice).count == 1, "the server has it already")

            // The app is killed; a new launch's queue on the same folder finishes the job.
            transport.online = false
            let second = try queue!.enqueue(Data("queued before the relaunch".utf8), contentType: "text/plain")
            queue = nil
            transport.online = true
            let relaunched = try FileUploadQueue(client: alice, directory: dir, automatic: false)
            #expect(Set(relaunched.items.map(\.id)) == [first.id, second.id])
            let report = await relaunched.sendPending()
            #expect(report.uploaded == [first.id, second.id] && report.recovered == 1)
            let files = try await Self.serverFiles(alice)
            #expect(files.count == 2, "no duplicate of the first upload")
            #expect(Set(files.map(\.size)) == [11, 26])
        }

        @Test("a refused file fails at once and is not retried; a failing server is retried, then given up; others still go")
        func refusals() async throws {
            let fx = try Fixture()
            let transport = SwitchableTransport()
            let alice = try await fx.user("alice", transport: transport)
            let queue = try FileUploadQueue(client: alice, directory: fx.scratch.appendingPathComponent("uploads"), automatic: false, maxAttempts: 2)
            let fake = try queue.enqueue(Data("not a png".utf8), contentType: "image/png")
            let fine = try queue.enqueue(Data("fine".utf8), contentType: "text/plain")
            let report = await queue.sendPending()
            #expect(report.failed == [fake.id] && report.uploaded == [fine.id])
            guard case .failed(let status, let code, _)? = queue.item(fake.id)?.state else { Issue.record("not failed"); return }
            #expect(status == 415 && code == "UnsupportedMediaType")
            let thrown = await #expect(throws: RoostError.self) { try await queue.uploaded(fake.id) }
            #expect(thrown?.code == .unsupportedMediaType)
            #expect(await queue.sendPending() == FileUploadQueue.Report())

            transport.failing = ["/files"]
            let flaky = try queue.enqueue(Data("hook says no".utf8), contentType: "text/plain")
            let once = await queue.sendPending()
            #expect(once.remaining == 1 && queue.item(flaky.id)?.attempts == 1)
            let twice = await queue.sendPending()
            #expect(twice.failed == [flaky.id])
            guard case .failed(500, "HookFailed", _)? = queue.item(flaky.id)?.state else { Issue.record("not given up"); return }
        }

        @Test("an automatic queue sends when the client reconnects and when something is queued online")
        func automatic() async throws {
            let fx = try Fixture()
            let transport = SwitchableTransport()
            let alice = try await fx.user("alice", transport: transport)
            let queue = try FileUploadQueue(client: alice, directory: fx.scratch.appendingPathComponent("uploads"))
            transport.online = false
            let item = try queue.enqueue(Data("sent on reconnect".utf8), contentType: "text/plain")
            // Queuing tries at once (in the background); offline, it stays queued.
            var deadline = Date().addingTimeInterval(10)
            while queue.item(item.id)?.attempts == 0, Date() < deadline { try await Task.sleep(nanoseconds: 20_000_000) }
            _ = await queue.sendPending()
            #expect(queue.item(item.id)?.state == .queued)
            #expect(queue.item(item.id)?.attempts == 2)
            transport.online = true
            alice.reconnectLiveStreams()
            deadline = Date().addingTimeInterval(10)
            while queue.item(item.id)?.isPending == true, Date() < deadline { try await Task.sleep(nanoseconds: 50_000_000) }
            #expect(queue.item(item.id)?.isPending == false)
            let online = try queue.enqueue(Data("sent at once".utf8), contentType: "text/plain")
            #expect(try await queue.uploaded(online.id).size == 12)
            #expect(try await Self.serverFiles(alice).count == 2)
        }

        @Test("uploads and downloads through URLSession report growing progress; the bytes arrive whole")
        func progress() async throws {
            let fx = try Fixture(config: Fixture.config + "\nmax_upload_bytes: 8388608\n")
            let alice = try await fx.user("alice")
            var generator = SystemRandomNumberGenerator()
            let big = Data((0..<3_000_000).map { _ in UInt8.random(in: 0...255, using: &generator) })
            let sent = Locked<[TransferProgress]>([])
            let meta = try await alice.files.upload(big, contentType: "application/octet-stream") { p in sent.update { $0.append(p) } }
            #expect(meta.size == big.count)
            #expect(sent.value.last == TransferProgress(completed: Int64(big.count), total: Int64(big.count)))
            #expect(sent.value.map(\.completed) == sent.value.map(\.completed).sorted())

            let received = Locked<[TransferProgress]>([])
            let target = fx.scratch.appendingPathComponent("download.bin")
            try await alice.files.download(meta.id, to: target) { p in received.update { $0.append(p) } }
            #expect(try Data(contentsOf: target) == big)
            #expect(received.value.count > 1, "progress as it arrives, not once")
            #expect(received.value.last == TransferProgress(completed: Int64(big.count), total: Int64(big.count)))

            let missing = await #expect(throws: RoostError.self) {
                try await alice.files.download("0123456789abcdef01234567", to: fx.scratch.appendingPathComponent("none"))
            }
            #expect(missing?.code == .notFound)
        }

        @Test("a local URL for AsyncImage: downloaded once with the session, then served from the cache")
        func localImageURL() async throws {
            let fx = try Fixture()
            let alice = try await fx.user("alice")
            let meta = try await alice.files.upload(TestImages.png, contentType: "image/png")
            let cache = fx.scratch.appendingPathComponent("image-cache")
            let url = try await alice.files.localURL(of: meta.id, in: cache)
            #expect(url.isFileURL)
            #expect(try Data(contentsOf: url) == TestImages.png)
            let thumb = try await alice.files.localURL(of: meta.id, thumbnailSize: 8, in: cache)
            #expect(thumb != url)
            #expect(try !Data(contentsOf: thumb).isEmpty)
            // The file store is not public: the plain URL needs the header a view cannot send.
            let (_, plain) = try await URLSession(configuration: .ephemeral).data(from: alice.files.url(of: meta.id))
            #expect((plain as? HTTPURLResponse)?.statusCode == 401)
            // Cached: served without the server.
            try await alice.files.delete(meta.id)
            #expect(try await alice.files.localURL(of: meta.id, in: cache) == url)
            let gone = await #expect(throws: RoostError.self) { try await alice.files.localURL(of: meta.id, thumbnailSize: 16, in: cache) }
            #expect(gone?.code == .notFound)
            #expect((try? FileManager.default.contentsOfDirectory(atPath: cache.path))?.count == 2, "no partial file left")
        }
    }
}
