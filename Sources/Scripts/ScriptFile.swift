import Foundation

/// One `*.lua` file of `scripts_dir`: its name (as tracebacks show it) and text.
public struct ScriptFile: Sendable {
    public let name: String
    public let text: String

    public init(name: String, text: String) {
        self.name = name
        self.text = text
    }

    /// Most bytes one script may have.
    static let maxBytes = 1 << 20

    /// The `*.lua` files of `directory`, in name order; none when it does not exist.
    public static func all(in directory: String) throws -> [ScriptFile] {
        guard !directory.isEmpty else { return [] }
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDir) else { return [] }
        guard isDir.boolValue else { throw ScriptError.load("scripts_dir \(directory) is not a directory") }
        let names = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".lua") }.sorted()
        return try names.map { name in
            let path = (directory as NSString).appendingPathComponent(name)
            guard let data = FileManager.default.contents(atPath: path) else { throw ScriptError.load("\(name): cannot be read") }
            guard data.count <= maxBytes else { throw ScriptError.load("\(name): larger than \(maxBytes) bytes") }
            guard let text = String(data: data, encoding: .utf8) else { throw ScriptError.load("\(name): not UTF-8 text") }
            return ScriptFile(name: name, text: text)
        }
    }
}

/// Scripts that failed to load (with file:line), or a call that failed.
public enum ScriptError: Error, CustomStringConvertible {
    case load(String)

    public var description: String {
        switch self {
        case .load(let text): return text
        }
    }
}
