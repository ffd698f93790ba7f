import Foundation
import PackagePlugin

/// Compiles the repository's `openapi.yaml` into the `Roost` target
/// (`OpenAPIDocument.text`), so the daemon serves the very file in the
/// repository at `/openapi.yaml`; editing the file rebuilds it.
@main
struct EmbedOpenAPI: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let input = context.package.directoryURL.appending(path: "openapi.yaml")
        let output = context.pluginWorkDirectoryURL.appending(path: "OpenAPIDocument.swift")
        return [.buildCommand(displayName: "Embedding openapi.yaml", executable: try context.tool(named: "EmbedText").url,
                              arguments: [input.path(), output.path(), "OpenAPIDocument"],
                              inputFiles: [input], outputFiles: [output])]
    }
}
