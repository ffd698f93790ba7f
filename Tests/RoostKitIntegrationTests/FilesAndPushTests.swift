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
            let token = UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
            let device = try await alice.registerPushDevice(token: token, platform: .ios)
            #expect(device.userId == alice.userID)
            #expect(try await alice.pushDevices().map(\.token) == [token])
            try await alice.removePushDevice(token: token)
            #expect(try await alice.pushDevices().isEmpty)
            let again = await #expect(throws: RoostError.self) { try await alice.removePushDevice(token: token) }
            #expect(again?.code == .notFound)
        }

        @Test("register for silent sync pushes, and sync on one")
        func syncPush() async throws {
            let fx = try Fixture()
            let alice = try await fx.user("alice")
            let apns = Data([0xab, 0x01, 0xff])
            let device = try await alice.registerPushDevice(apnsToken: apns, environment: .sandbox)
            #expect(device.token == "ab01ff" && device.platform == "ios")
            _ = try await alice.registerPushDevice(token: "fcm-token", platform: .android, sync: true)
            #expect(Set(try await alice.pushDevices().map(\.token)) == ["ab01ff", "fcm-token"])
            let refused = await #expect(throws: RoostError.self) {
                try await alice.registerPushDevice(token: "x", platform: .android, environment: .sandbox)
            }
            #expect(refused?.code == .invalidDocument)

            // what APNs and FCM hand the app
            #expect(SyncPush(userInfo: ["aps": ["content-available": 1], "roost": ["sync": ["notes"]]])?.collections == ["notes"])
            #expect(SyncPush(userInfo: ["roost": "{\"sync\":[\"notes\",\"tasks\"]}"])?.collections == ["notes", "tasks"])
            #expect(SyncPush(userInfo: ["aps": ["alert": "hi"]]) == nil)

            // a sync push pulls what changed; anything else does nothing
            let store = try OfflineStore(client: alice, url: fx.storeURL("alice"), mirrors: [Mirror("notes")])
            _ = try await alice.collection("notes", of: JSONValue.self).create(["text": "written elsewhere"])
            guard case .notRoost = await store.handleSyncPush(userInfo: ["aps": ["alert": "hi"]]) else { Issue.record("not Roost's"); return }
            guard case .synced(let report) = await store.handleSyncPush(userInfo: ["roost": ["sync": ["notes"]]]) else {
                Issue.record("expected a sync"); return
            }
            #expect(report.changed == 1)
        }
    }
}
