import Foundation

/// The readable block roostd prints once it serves: the URLs, the data
/// directory and engine, whether an admin credential exists (or the one-time
/// console link that creates it), and a warning per risk the config opens.
/// It goes to stderr only (the terminal, or the journal under systemd), never
/// through the log ring the console shows, since it may hold the setup code.
struct StartupReport {
    let config: RoostConfig
    /// The bound addresses, as `listen` spells them (`https://` for TLS).
    let addresses: [String]
    let version: String
    /// Where the admin credential comes from; nil when there is none.
    let adminSource: String?
    /// The one-time setup code, when there is no admin credential.
    let setupCode: String?

    var text: String {
        let base = Self.link(addresses.first(where: { !$0.hasSuffix(RoostConfig.Listener.proxySuffix) }) ?? addresses.first ?? "")
        var lines = ["", "Roost \(version) is serving"]
        lines.append("  API            \(base)/")
        lines.append("  console        \(base)/_/")
        lines.append("  API reference  \(base)/openapi.yaml")
        if addresses.count > 1 { lines.append("  listening on   \(addresses.joined(separator: ", "))") }
        lines.append("  data           \(Self.absolute(config.dataDir))")
        lines.append("  engine         " + (config.databaseURL == nil ? "SQLite (\(Self.absolute(config.dataDir))/roost.db)"
                                                               : "PostgreSQL (\(config.databaseDescription))"))
        lines.append("  collections    " + (config.autoCreateCollections
            ? "undeclared ones are \(config.defaultPermission.rawValue) and created on first write (auto_create_collections)"
            : "only those the config names (\(config.collections.keys.filter { BuiltInRules(rawValue: $0) == nil }.count)) take writes; undeclared ones are \(config.defaultPermission.rawValue)"))
        if let adminSource {
            lines.append("  admin          \(adminSource)")
        } else {
            lines.append("  admin          none yet")
        }
        if let setupCode {
            let minutes = Int(AdminCredential.setupLifetime / 60)
            lines += ["", "  No admin credential exists yet. Open this one-time link within \(minutes) minutes to create it in the browser:",
                      "    \(base)/_/#setup=\(setupCode)",
                      "  (single use; shown only here. Or set admin_token / ROOST_ADMIN_TOKEN and restart.)"]
        } else if adminSource == nil {
            lines.append("  (set admin_token / ROOST_ADMIN_TOKEN for the console and the admin API)")
        }
        let warnings = risks
        if !warnings.isEmpty { lines.append("") }
        lines += warnings.map { "  warning: " + $0 }
        lines.append("")
        return lines.joined(separator: "\n") + "\n"
    }

    /// What the config leaves open to anyone who can reach the port.
    var risks: [String] {
        var out: [String] = []
        if config.defaultPermission == .public {
            out.append("default_permission is public: anyone who can reach the port reads and writes every collection the config does not name")
        }
        for (name, collection) in config.collections.sorted(by: { $0.key < $1.key }) where collection.permission == .public {
            out.append("collection \(name) is public: anyone who can reach the port reads and writes it, without signing in")
        }
        if config.filesPermission == .public {
            out.append("files_permission is public: anyone who can reach the port uploads and downloads files, without signing in")
        }
        for address in addresses where !address.hasPrefix("https://") && !address.hasSuffix(RoostConfig.Listener.proxySuffix)
            && !Self.isLoopback(address) {
            out.append("\(address) is plain HTTP on a non-loopback address: passwords and tokens cross the network unencrypted (listen on https:// with tls, or behind a TLS proxy)")
        }
        if config.corsOrigins.contains("*") {
            out.append("cors.origins is *: any web site a visitor opens may call this API from their browser")
        }
        return out
    }

    /// A URL a browser on this machine can open for a bound address.
    static func link(_ address: String) -> String {
        var text = address
        let scheme = text.hasPrefix("https://") ? "https://" : "http://"
        if text.hasPrefix("https://") { text.removeFirst(8) }
        if text.hasPrefix("0.0.0.0:") { text = "127.0.0.1:" + text.dropFirst(8) }
        if text.hasPrefix("[::]:") { text = "[::1]:" + text.dropFirst(5) }
        return scheme + text
    }

    static func isLoopback(_ address: String) -> Bool {
        let host = address.hasPrefix("[") ? String(address.dropFirst().prefix(while: { $0 != "]" }))
                                          : String(address.prefix(while: { $0 != ":" }))
        return host.hasPrefix("127.") || host == "::1" || host == "localhost"
    }

    static func absolute(_ path: String) -> String {
        let full = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        return URL(fileURLWithPath: full).standardizedFileURL.path
    }
}
