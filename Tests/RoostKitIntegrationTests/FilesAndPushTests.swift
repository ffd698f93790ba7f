import Foundation
import Testing
@testable import RoostKit

extension AgainstRoostd {
    @Suite("Files and push") struct FilesAndPush {
        @Test("upload data and a file URL, download, thumbnail, delete")
        func files() async throws {
            let fx = try Fixture()
            let alice = try await fx.user("alice")
            let png = TestImages.png
            let meta = try await alice.files.upload(png, contentType: "image/png")
            #expect(meta.contentType == "image/png")
            #expect(meta.size == png.count)
            #expect(meta.width == 16)
            #expect(try await alice.files.download(meta.id) == png)

            let thumb = try await alice.files.thumbnail(meta.id, size: 128)
            #expect(!thumb.isEmpty)
            let boxed = try await alice.files.thumbnail(meta.id, width: 8, height: 4, fit: .cover)
            #expect(!boxed.isEmpty)
            #expect(try await alice.files.meta(meta.id).thumbnails?["128"] != nil)

            let text = fx.scratch.appendingPathComponent("note.txt")
            try Data("hello roost".utf8).write(to: text)
            let uploaded = try await alice.files.upload(contentsOf: text, contentType: "text/plain")
            #expect(try await alice.files.download(uploaded.id) == Data("hello roost".utf8))

            let mismatch = await #expect(throws: RoostError.self) { try await alice.files.upload(png, contentType: "image/jpeg") }
            #expect(mismatch?.code == .unsupportedMediaType)

            try await alice.files.delete(meta.id)
            let gone = await #expect(throws: RoostError.self) { try await alice.files.meta(meta.id) }
            #expect(gone?.code == .notFound)
        }

        @Test("register, list and remove a push device")
        func push() async throws {
            let fx = try Fixture()
            let alice = try await fx.user("alice")
            let token = "apns-\(UUID().uuidString)"
            let device = try await alice.registerPushDevice(token: token, platform: .ios)
            #expect(device.userId == alice.userID)
            #expect(try await alice.pushDevices().map(\.token) == [token])
            try await alice.removePushDevice(token: token)
            #expect(try await alice.pushDevices().isEmpty)
            let again = await #expect(throws: RoostError.self) { try await alice.removePushDevice(token: token) }
            #expect(again?.code == .notFound)
        }
    }
}
