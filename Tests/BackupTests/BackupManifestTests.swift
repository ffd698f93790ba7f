@testable import Backup
import Testing

@Suite struct BackupManifestTests {
    static let sha = String(repeating: "ab", count: 32)
    static let manifest = BackupManifest(
        createdAt: "2026-05-02T10:15:00.123Z", seconds: 1.25,
        database: .init(path: "roost.db", size: 4096, sha256: sha),
        files: [.init(path: "files/objects/3f/65f1c0e2a9b84d1e7c00003f", size: 10, sha256: sha),
                .init(path: "files/thumbs/3f/65f1c0e2a9b84d1e7c00003f/128.webp", size: 3, sha256: sha)])

    @Test func roundTrips() throws {
        let parsed = try BackupManifest.parse(Self.manifest.text)
        #expect(parsed == Self.manifest)
        #expect(parsed.totalBytes == 4096 + 13)
    }

    static func edit(_ kind: String, _ t: String) -> String {
        switch kind {
        case "cut short": return String(t.prefix(t.count / 2))
        case "no final newline": return String(t.dropLast())
        case "entry edited": return t.replacingOccurrences(of: "f 10 ", with: "f 11 ")
        case "entry dropped": return t.replacingOccurrences(of: "f 3 \(sha) files/thumbs/3f/65f1c0e2a9b84d1e7c00003f/128.webp\n", with: "")
        case "seal edited": return String(t.dropLast(3)) + "00\n"
        default: return "hello\nend 1 00\n"
        }
    }

    /// Each edit of a sealed manifest is refused, with a reason naming it.
    @Test(arguments: [
        ("cut short", "end line"), ("no final newline", "end line"), ("entry edited", "seal"),
        ("entry dropped", "seal"), ("seal edited", "seal"), ("not ours", "seal"),
    ])
    func refusesTampering(kind: String, reason: String) {
        do {
            _ = try BackupManifest.parse(Self.edit(kind, Self.manifest.text))
            Issue.record("\(kind): accepted")
        } catch {
            #expect("\(error)".contains(reason), "\(kind): \(error)")
        }
    }

    @Test(arguments: [
        ("files/objects/3f/65f1c0e2a9b84d1e7c00003f", true), ("roost.db", true), ("files/thumbs/ab/x/w200-h100-cover.jpg", true),
        ("/etc/passwd", false), ("files/../../etc", false), ("files//x", false), ("a b", false), ("", false), ("./x", false),
    ])
    func safePaths(path: String, safe: Bool) {
        #expect(BackupManifest.isSafePath(path) == safe)
    }

    /// A manifest that is sealed but names an unsafe path is still refused.
    @Test func sealedButUnsafePathIsRefused() {
        var m = Self.manifest
        m.files.append(.init(path: "files/objects/ab/../../../x", size: 1, sha256: Self.sha))
        #expect(throws: BackupManifest.Invalid.self) { try BackupManifest.parse(m.text) }
    }

    @Test func streamingHashMatchesOneShot() {
        let bytes = (0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        #expect(SHA256Stream.hex(bytes) == "\(SHA256Stream.hex(bytes))")
        #expect(SHA256Stream.hex([]) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(SHA256Stream.hex(Array("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }
}
