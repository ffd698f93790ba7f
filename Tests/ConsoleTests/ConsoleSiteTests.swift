@testable import Console
import Foundation
import HTTP
import Testing

@Suite struct ConsoleSiteTests {
    func get(_ path: String, method: Request.Method = .get) -> Response {
        let segments = path.split(separator: "/").map(String.init)
        return ConsoleSite.response(for: Request(method: method, path: path, segments: segments, query: [:],
                                                 headers: Headers(), body: [], requestID: "t"))
    }

    @Test func thePageIsNeverCachedAndPointsAtVersionedAssets() {
        let r = get("/_/")
        #expect(r.status == 200)
        #expect(r.headers["Cache-Control"] == "no-cache")
        let html = String(decoding: r.body, as: UTF8.self)
        #expect(html.contains("src=\"/_/assets/\(ConsoleSite.version)/app.js\""))
        #expect(!html.contains("{{ASSETS}}"))
    }

    @Test func everyResponseCarriesTheStrictPolicy() {
        for path in ["/_/", "/_/assets/\(ConsoleSite.version)/app.js", "/_/nope"] {
            let csp = get(path).headers["Content-Security-Policy"] ?? ""
            #expect(csp.contains("script-src 'self'"))
            #expect(csp.contains("frame-ancestors 'none'"))
            #expect(!csp.contains("unsafe-inline"))
        }
    }

    @Test func assetsAreImmutableUnderTheirHashAndMissingOtherwise() {
        let r = get("/_/assets/\(ConsoleSite.version)/style.css")
        #expect(r.status == 200)
        #expect(r.headers["Content-Type"] == "text/css; charset=utf-8")
        #expect(r.headers["Cache-Control"] == "public, max-age=31536000, immutable")
        #expect(get("/_/assets/0000000000000000/style.css").status == 404)
        #expect(get("/_/assets/\(ConsoleSite.version)/missing.js").status == 404)
        #expect(get("/_/", method: .post).status == 405)
    }

    @Test func everyFileInTheWebFolderIsCompiledInAsItIs() throws {
        let web = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appending(path: "../../Sources/Console/Web").standardized
        let names = try FileManager.default.contentsOfDirectory(atPath: web.path).filter { !$0.hasPrefix(".") }.sorted()
        #expect(ConsoleFiles.files.map(\.name) == names)
        for file in ConsoleFiles.files {
            #expect(Array(file.text.utf8) == Array(try Data(contentsOf: web.appending(path: file.name))), "\(file.name)")
        }
        #expect(ConsoleAssets.all.count == names.count - 1 && ConsoleSite.assets[ConsoleAssets.pageName] == nil)
    }

    @Test func everyModuleTheAppImportsIsServed() {
        // Static imports (`from './x.js'`) in every script must name an asset.
        for asset in ConsoleAssets.all where asset.name.hasSuffix(".js") {
            let text = String(decoding: asset.body, as: UTF8.self)
            for part in text.components(separatedBy: "from './").dropFirst() {
                let name = String(part.prefix { $0 != "'" })
                #expect(ConsoleSite.assets[name] != nil, "\(asset.name) imports \(name)")
            }
        }
        #expect(ConsoleSite.version.count == 16)
    }
}
