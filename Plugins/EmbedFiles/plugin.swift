import Foundation
import PackagePlugin

/// Compiles repository files into the target that uses this plugin (with
/// `EmbedText`), so the daemon serves the very files in the repository and
/// reads none at run time; editing one rebuilds it. Each target declares one
/// enum holding its files' names and texts.
@main
struct EmbedFiles: BuildToolPlugin {
    /// What each target embeds: the enum it declares and the files, relative
    /// to the package; a folder stands for every file in it, by name.
    static let embeddings: [String: (name: String, paths: [String])] = [
        // Served at /openapi.yaml (`OpenAPIDocument.text`).
        "Roost": ("OpenAPIDocument", ["openapi.yaml"]),
        // The admin console's page, scripts, style and icon (`ConsoleFiles.files`).
        "Console": ("ConsoleFiles", ["Sources/Console/Web"]),
    ]

    struct NothingToEmbed: Error, CustomStringConvertible {
        let target: String
        var description: String { "EmbedFiles: no files are listed for the target \(target)" }
    }

    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        guard let embedding = Self.embeddings[target.name] else { throw NothingToEmbed(target: target.name) }
        let inputs = try embedding.paths.flatMap { try files(at: context.package.directoryURL.appending(path: $0)) }
        let output = context.pluginWorkDirectoryURL.appending(path: "\(embedding.name).swift")
        return [.buildCommand(displayName: "Embedding \(inputs.count) file(s) into \(target.name) as \(embedding.name)",
                              executable: try context.tool(named: "EmbedText").url,
                              arguments: [output.path(), embedding.name] + inputs.map { $0.path() },
                              inputFiles: inputs, outputFiles: [output])]
    }

    /// The file at `url`, or every visible file in the folder at `url`, by name.
    func files(at url: URL) throws -> [URL] {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path(), isDirectory: &isFolder), isFolder.boolValue else { return [url] }
        return try FileManager.default.contentsOfDirectory(at: url, includingPropertiesForKeys: nil, options: [.skipsHiddenFiles])
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
    }
}
