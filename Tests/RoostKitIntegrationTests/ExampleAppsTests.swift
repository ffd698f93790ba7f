import Foundation
import Testing
@testable import RoostKit

/// The seed apps (Examples/TourMyTown, Examples/WaterCooler) run end to end
/// against a real roostd, as built executables.
extension AgainstRoostd {
    @Suite("Example apps") struct ExampleApps {
        /// An example's binary, built beside the test bundle.
        static func binary(_ name: String) -> String {
            let beside = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(name).path
            if FileManager.default.isExecutableFile(atPath: beside) { return beside }
            return URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent(".build/debug/\(name)").path
        }

        /// Runs an example against the fixture's server with a picture; returns its exit status and lines.
        static func run(_ name: String, _ fx: Fixture, pictureFlag: String) throws -> (Int32, [String]) {
            let picture = fx.scratch.appendingPathComponent("picture.png")
            try TestImages.png.write(to: picture)
            let log = fx.scratch.appendingPathComponent("\(name).txt")
            FileManager.default.createFile(atPath: log.path, contents: nil)
            let p = Process()
            p.executableURL = URL(fileURLWithPath: binary(name))
            p.arguments = ["--server", fx.server.baseURL, "--home", fx.scratch.appendingPathComponent(name).path, pictureFlag, picture.path]
            let handle = try FileHandle(forWritingTo: log)
            p.standardOutput = handle
            p.standardError = handle
            try p.run()
            p.waitUntilExit()
            let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            return (p.terminationStatus, text.split(separator: "\n").map(String.init))
        }

        @Test("TourMyTown: places with a photo, geo queries, a place and its photo added offline")
        func tourMyTown() async throws {
            let fx = try Fixture()
            let (status, lines) = try Self.run("TourMyTown", fx, pictureFlag: "--photo")
            #expect(status == 0, "\(lines)")
            #expect(lines.contains { $0.hasPrefix("photo: ") && $0.hasSuffix("image/png 16x16") })
            #expect(lines.contains("created: 4 places in one batch"))
            #expect(lines.contains("nearby: de Young, Golden Gate Park"))
            #expect(lines.contains("parks within 10 km: Golden Gate Park, de Young"))
            #expect(lines.contains("in the downtown polygon: Coit Tower"))
            #expect(lines.contains { $0.hasPrefix("thumbnail: ") && !$0.hasPrefix("thumbnail: 0 ") })
            #expect(lines.contains("offline nearby: Palace of Fine Arts (1 waiting)"))
            #expect(lines.contains("sync: offline, kept"))
            #expect(lines.contains("photo upload: 1 queued"))
            #expect(lines.contains { $0.hasPrefix("synced: sent ") && $0.hasSuffix(", conflicts 0") })
            #expect(lines.contains("on the server: yes, photo attached"))
            #expect(lines.contains("photo for AsyncImage: a local file"))
            // The server holds the places as the app made them: points as [lng, lat].
            let reader = try await fx.user("reader")
            let palace = try await reader.collection("locations", of: JSONValue.self).find(Query(Field("name") == "Palace of Fine Arts"))
            #expect(palace.first?.value["location"] == [-122.4484, 37.8029])
        }

        @Test("WaterCooler: sign-up with a picture, directory, private messages in a thread, live delivery, push")
        func waterCooler() async throws {
            let fx = try Fixture()
            let (status, lines) = try Self.run("WaterCooler", fx, pictureFlag: "--picture")
            #expect(status == 0, "\(lines)")
            #expect(lines == [
                "alice signed up with picture set",
                "bob signed up",
                "bob's push device: ios",
                lines.first { $0.hasPrefix("directory: bob-") && $0.hasSuffix(" (Bob)") } ?? "directory line missing",
                "alice sent: Coffee at the water cooler?",
                "bob got live: Coffee at the water cooler?",
                "bob's threads: 1",
                "  alice: Coffee at the water cooler?",
                "  bob: On my way.",
                "thread's last message: On my way.",
                "bob sees alice's picture: yes",
            ])
        }
    }
}
