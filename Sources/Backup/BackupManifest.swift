/// The list of everything one backup holds: the database and each file, by
/// path inside the backup, with its size and SHA-256.
///
/// A text file, one entry a line, written last and checked first:
///
/// ```
/// roost-backup 1
/// created 2026-05-02T10:15:00.123Z
/// seconds 1.250
/// d 4096000 <sha256> roost.db
/// f 51234 <sha256> files/objects/3f/65f1c0e2a9b84d1e7c00003f
/// end 2 <sha256 of every byte above this line>
/// ```
///
/// The `end` line seals it: a manifest cut short (a crash while writing
/// it) or edited has no valid seal and the backup does not count.
public struct BackupManifest: Sendable, Equatable {
    /// One file of the backup.
    public struct Entry: Sendable, Equatable {
        public let path: String
        public let size: Int
        public let sha256: String

        public init(path: String, size: Int, sha256: String) {
            self.path = path
            self.size = size
            self.sha256 = sha256
        }
    }

    public static let fileName = "MANIFEST"
    public static let databaseName = "roost.db"
    static let magic = "roost-backup 1"

    /// When the snapshot was taken (UTC, ISO 8601).
    public var createdAt: String
    /// How long taking it took, verification included.
    public var seconds: Double
    public var database: Entry
    public var files: [Entry]

    public init(createdAt: String, seconds: Double, database: Entry, files: [Entry]) {
        self.createdAt = createdAt
        self.seconds = seconds
        self.database = database
        self.files = files
    }

    /// Bytes of the database and every file.
    public var totalBytes: Int { files.reduce(database.size) { $0 + $1.size } }

    /// The sealed text.
    public var text: String {
        var body = "\(Self.magic)\ncreated \(createdAt)\nseconds \(String(format: "%.3f", seconds))\n"
        body += "d \(database.size) \(database.sha256) \(database.path)\n"
        for f in files { body += "f \(f.size) \(f.sha256) \(f.path)\n" }
        return body + "end \(files.count + 1) \(SHA256Stream.hex(Array(body.utf8)))\n"
    }

    /// Why a manifest does not count.
    public struct Invalid: Error, CustomStringConvertible {
        public let description: String
    }

    /// Parses and checks the seal, the entry count and every path.
    public static func parse(_ text: String) throws -> BackupManifest {
        guard let endStart = text.range(of: "\nend ", options: .backwards) else {
            throw Invalid(description: "the manifest has no end line (cut short)")
        }
        let body = String(text[..<endStart.lowerBound]) + "\n"
        let endFields = text[endStart.upperBound...].split(separator: " ").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
        guard text.hasSuffix("\n"), endFields.count == 2, let count = Int(endFields[0]) else {
            throw Invalid(description: "the manifest's end line is malformed")
        }
        guard SHA256Stream.hex(Array(body.utf8)) == endFields[1] else {
            throw Invalid(description: "the manifest's seal does not match its content")
        }
        let lines = body.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        guard lines.first == Substring(magic) else { throw Invalid(description: "not a Roost backup manifest") }
        var createdAt: String?, seconds = 0.0, database: Entry?, files: [Entry] = []
        for line in lines.dropFirst() {
            let fields = line.split(separator: " ", maxSplits: 3).map(String.init)
            switch fields.first {
            case "created" where fields.count == 2: createdAt = fields[1]
            case "seconds" where fields.count == 2: seconds = Double(fields[1]) ?? 0
            case "d" where fields.count == 4, "f" where fields.count == 4:
                guard let size = Int(fields[1]), size >= 0, isHex64(fields[2]), isSafePath(fields[3]) else {
                    throw Invalid(description: "malformed manifest entry: \(line)")
                }
                let entry = Entry(path: fields[3], size: size, sha256: fields[2])
                if fields[0] == "d" { database = entry } else { files.append(entry) }
            default: throw Invalid(description: "unknown manifest line: \(line)")
            }
        }
        guard let createdAt, let database, database.path == databaseName else {
            throw Invalid(description: "the manifest names no creation time or database")
        }
        guard count == files.count + 1 else { throw Invalid(description: "the manifest lists \(files.count + 1) entries, its end line \(count)") }
        return BackupManifest(createdAt: createdAt, seconds: seconds, database: database, files: files)
    }

    static func isHex64(_ s: String) -> Bool {
        s.utf8.count == 64 && s.utf8.allSatisfy { ($0 >= 48 && $0 <= 57) || ($0 >= 97 && $0 <= 102) }
    }

    /// A relative path of plain names: no `..`, no leading `/`, no spaces.
    static func isSafePath(_ s: String) -> Bool {
        guard !s.isEmpty, !s.hasPrefix("/") else { return false }
        let parts = s.split(separator: "/", omittingEmptySubsequences: false)
        return parts.allSatisfy { part in
            !part.isEmpty && part != "." && part != ".."
                && part.utf8.allSatisfy { c in
                    (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c == 45 || c == 46 || c == 95
                }
        }
    }
}
