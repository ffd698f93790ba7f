/// The console's files: each is a file in `Web/`, compiled in by the
/// EmbedFiles plugin (`ConsoleFiles`). `index.html` is the page served at
/// `/_/`; every other file is an asset under `/_/assets/<version>/`, so a new
/// file in `Web/` is served with no other change.
enum ConsoleAssets {
    /// The page's file name.
    static let pageName = "index.html"

    /// Every file but the page.
    static let all: [ConsoleAsset] = ConsoleFiles.files.filter { $0.name != pageName }.map { ConsoleAsset($0.name, $0.text) }

    /// The page's text, with `{{ASSETS}}` where the asset path goes.
    static let indexHTML: String = {
        guard let page = ConsoleFiles.files.first(where: { $0.name == pageName }) else {
            preconditionFailure("Sources/Console/Web/\(pageName) was not compiled in")
        }
        return page.text
    }()
}
