import RoostTestSupport
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Testing
@testable import RoostKit

extension AgainstRoostd {
    @Suite("A client process killed with queued writes") struct ProcessKill {
        /// The example client, built beside the test bundle.
        static var roostChat: String {
            let beside = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("RoostChat").path
            if FileManager.default.isExecutableFile(atPath: beside) { return beside }
            return URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent(".build/debug/RoostChat").path
        }

        /// Runs RoostChat and returns its output once it exits.
        static func chat(_ home: URL, _ server: String, _ args: [String]) throws -> String {
            let p = try start(home, server, args)
            p.process.waitUntilExit()
            return p.output()
        }

        struct Running {
            let process: Process
            let log: URL
            func output() -> String { (try? String(contentsOf: log, encoding: .utf8)) ?? "" }
        }

        static func start(_ home: URL, _ server: String, _ args: [String]) throws -> Running {
            let log = home.appendingPathComponent("out-\(UUID().uuidString).txt")
            try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
            FileManager.default.createFile(atPath: log.path, contents: nil)
            let handle = try FileHandle(forWritingTo: log)
            let p = Process()
            p.executableURL = URL(fileURLWithPath: roostChat)
            p.arguments = ["--server", server, "--home", home.path] + args
            p.standardOutput = handle
            p.standardError = handle
            try p.run()
            return Running(process: p, log: log)
        }

        /// A TCP port that accepts connections (the kernel does) but never answers.
        static func blackhole() throws -> (Int32, Int) {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            var size = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, size) == 0 && getsockname(fd, $0, &size) == 0 }
            }
            guard bound, listen(fd, 16) == 0 else { throw RoostProcess.Failure("blackhole socket failed") }
            return (fd, Int(UInt16(bigEndian: address.sin_port)))
        }

        @Test("kill -9 during the replay loses no queued message; each arrives once, in order")
        func killDuringReplay() throws {
            let fx = try Fixture()
            let (aliceHome, bobHome) = (fx.scratch.appendingPathComponent("alice"), fx.scratch.appendingPathComponent("bob"))
            let server = fx.server.baseURL
            #expect(try Self.chat(bobHome, server, ["signup", "bob", "bob-password"]).contains("Welcome"))
            #expect(try Self.chat(aliceHome, server, ["signup", "alice", "alice-password"]).contains("Welcome"))
            #expect(try Self.chat(aliceHome, server, ["users"]).contains("bob"))

            _ = try Self.chat(aliceHome, server, ["--offline", "send", "bob", "one"])
            _ = try Self.chat(aliceHome, server, ["--offline", "send", "bob", "two"])
            // Online again, but the server never answers: the replay hangs, and the process is killed mid-send.
            let (hole, port) = try Self.blackhole()
            defer { close(hole) }
            let stuck = try Self.start(aliceHome, "http://127.0.0.1:\(port)", ["send", "bob", "three"])
            let deadline = Date().addingTimeInterval(20)
            while !stuck.output().contains("Queued"), Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
            Thread.sleep(forTimeInterval: 0.3)
            #expect(stuck.process.isRunning)
            kill(stuck.process.processIdentifier, SIGKILL)
            stuck.process.waitUntilExit()

            let pending = try Self.chat(aliceHome, server, ["--offline", "pending"])
            #expect(pending.split(separator: "\n").map { $0.split(separator: "\t").last.map(String.init) } == ["one", "two", "three"])
            #expect(try Self.chat(aliceHome, server, ["sync"]).contains("sent 3"))
            let inbox = try Self.chat(bobHome, server, ["inbox"])
            let texts = inbox.split(separator: "\n").compactMap { $0.split(separator: ": ").last.map(String.init) }
            #expect(texts == ["one", "two", "three"], "\(inbox)")
        }
    }
}
