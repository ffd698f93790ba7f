import HTTP

/// The admin console's static files, compiled into `roostd`, served at `/_/`.
///
/// Each file lives in `Web/` as itself (`app.js`, `style.css`, …); the
/// EmbedFiles build plugin compiles them in as Swift strings, so `roostd`
/// reads no file and needs no resources bundle. `version` is a hash of every asset: the page
/// at `/_/` (never cached) loads them from `/_/assets/<version>/…`, cached
/// for a year as immutable, and a new build gets new URLs.
public enum ConsoleSite {
    /// Every asset by file name (`app.js`, `style.css`, …).
    static let assets: [String: ConsoleAsset] = Dictionary(uniqueKeysWithValues: ConsoleAssets.all.map { ($0.name, $0) })

    /// A hash of every asset's name and bytes (FNV-1a, 64 bits, hex).
    public static let version: String = {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for asset in ConsoleAssets.all.sorted(by: { $0.name < $1.name }) {
            for byte in Array(asset.name.utf8) + [0] + asset.body {
                hash ^= UInt64(byte)
                hash = hash &* 0x100_0000_01b3
            }
        }
        let hex = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }()

    /// Where the page finds its assets.
    public static var assetBase: String { "/_/assets/\(version)" }

    /// The page, with the versioned asset path filled in.
    static let index: [UInt8] = Array(ConsoleAssets.indexHTML.replacing("{{ASSETS}}", with: assetBase).utf8)

    /// No inline script or style, nothing from elsewhere, never framed.
    public static let contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob:; "
        + "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

    /// The response to a request under `/_/`.
    public static func response(for request: Request) -> Response {
        guard request.method == .get || request.method == .head else {
            return secured(HTTPError.methodNotAllowed(request.method, allow: "GET, HEAD").response)
        }
        let s = request.segments
        if s.count == 1 || (s.count == 2 && s[1] == "index.html") {
            var r = Response(status: 200, headers: Headers([("Content-Type", "text/html; charset=utf-8"), ("Cache-Control", "no-cache")]),
                             body: index)
            r = secured(r)
            return r
        }
        guard s.count == 4, s[1] == "assets", s[2] == version, let asset = assets[s[3]] else {
            return secured(HTTPError.notFound("No console file at \(request.path).").response)
        }
        return secured(Response(status: 200, headers: Headers([
            ("Content-Type", asset.contentType), ("Cache-Control", "public, max-age=31536000, immutable"),
            ("ETag", "\"\(version)\""),
        ]), body: asset.body))
    }

    static func secured(_ response: Response) -> Response {
        var r = response
        r.headers.add("Content-Security-Policy", contentSecurityPolicy)
        r.headers.add("X-Content-Type-Options", "nosniff")
        r.headers.add("X-Frame-Options", "DENY")
        r.headers.add("Referrer-Policy", "no-referrer")
        return r
    }
}

/// One file of the console.
public struct ConsoleAsset: Sendable {
    public let name: String
    public let contentType: String
    public let body: [UInt8]

    init(_ name: String, _ text: String) {
        self.name = name
        body = Array(text.utf8)
        switch name.split(separator: ".").last {
        case "js": contentType = "text/javascript; charset=utf-8"
        case "css": contentType = "text/css; charset=utf-8"
        case "svg": contentType = "image/svg+xml"
        default: contentType = "text/html; charset=utf-8"
        }
    }
}
