import Foundation

/// An OpenID provider on 127.0.0.1 for the ID-token tests: a fresh RSA key
/// (made by the `openssl` command), its JWKS at `/jwks`, and RS256 ID tokens
/// signed by `openssl dgst`. Configure roostd with
/// `{issuer: <url>, jwks_url: <url>/jwks, client_ids: [com.example.app]}`.
final class OIDCIssuer: @unchecked Sendable {
    let url: String
    private let key: URL
    private let modulus: String
    private var listener: LoopbackListener!

    init(directory: URL) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        key = directory.appendingPathComponent("oidc-\(UUID().uuidString).pem")
        _ = try Self.openssl(["genrsa", "-out", key.path, "2048"])
        let text = String(decoding: try Self.openssl(["rsa", "-in", key.path, "-noout", "-modulus"]), as: UTF8.self)
        let hex = Array(text.trimmingCharacters(in: .whitespacesAndNewlines).dropFirst("Modulus=".count))
        let bytes = stride(from: 0, to: hex.count, by: 2).map { UInt8(String(hex[$0...$0 + 1]), radix: 16)! }
        modulus = Self.base64URL(Data(bytes))
        let jwks = Data(#"{"keys":[{"kty":"RSA","kid":"k1","alg":"RS256","use":"sig","n":"\#(modulus)","e":"AQAB"}]}"#.utf8)
        let listener = try LoopbackListener { connection in
            guard let requestLine = connection.readLine() else { return }
            while let header = connection.readLine(), !header.isEmpty {}
            let found = requestLine.hasPrefix("GET /jwks ")
            let body = found ? jwks : Data()
            connection.send(Array(("HTTP/1.1 \(found ? "200 OK" : "404 Not Found")\r\nContent-Type: application/json\r\n"
                + "Cache-Control: max-age=3600\r\nContent-Length: \(body.count)\r\nConnection: close\r\n\r\n").utf8) + [UInt8](body))
        }
        self.listener = listener
        url = "http://127.0.0.1:\(listener.port)"
    }

    /// An ID token for `sub`, whose `nonce` claim is the SHA-256 hex of
    /// `rawNonce` (computed by `openssl dgst`, not by RoostKit).
    func token(sub: String, rawNonce: String, audience: String = "com.example.app", email: String? = nil) throws -> String {
        let digest = String(decoding: try Self.openssl(["dgst", "-sha256", "-r"], input: Data(rawNonce.utf8)), as: UTF8.self)
        let nonce = String(digest.prefix(64))
        let now = Int(Date().timeIntervalSince1970)
        var claims: [String: Any] = ["iss": url, "sub": sub, "aud": audience, "iat": now, "exp": now + 600, "nonce": nonce,
                                     "jti": UUID().uuidString]
        if let email { claims["email"] = email; claims["email_verified"] = true }
        let header = Self.base64URL(Data(#"{"alg":"RS256","kid":"k1","typ":"JWT"}"#.utf8))
        let payload = Self.base64URL(try JSONSerialization.data(withJSONObject: claims))
        let input = header + "." + payload
        let signature = try Self.openssl(["dgst", "-sha256", "-sign", key.path], input: Data(input.utf8))
        return input + "." + Self.base64URL(signature)
    }

    static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// Runs `openssl` with `arguments`, feeding `input`; its standard output.
    static func openssl(_ arguments: [String], input: Data? = nil) throws -> Data {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["openssl"] + arguments
        let output = Pipe(), stdin = Pipe()
        process.standardOutput = output
        process.standardInput = stdin
        process.standardError = FileHandle.nullDevice
        try process.run()
        if let input { stdin.fileHandleForWriting.write(input) }
        try stdin.fileHandleForWriting.close()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw LoopbackListener.Failure("openssl \(arguments.first ?? "") failed") }
        return data
    }
}
