import ArgumentParser
import Daemon
import Foundation
import Logging
import Roost

/// `roostd`: the Roost daemon and its tools.
struct RoostCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "roostd",
        abstract: "Roost, a self-hosted mobile backend.",
        version: RoostServer.version,
        subcommands: [Serve.self, CheckConfig.self, SettingsTable.self, CheckReferences.self, CheckSchema.self, ExportCollections.self, Hooks.self, CheckScripts.self, TakeBackup.self, Restore.self, VerifyBackup.self],
        defaultSubcommand: Serve.self)
}

/// Options shared by subcommands that read the configuration.
struct ConfigOptions: ParsableArguments, Sendable {
    @Option(name: .long, help: "A YAML configuration file (default: $ROOST_CONFIG, else none).")
    var config: String?

    @Option(name: .long, help: "Listen address host:port; repeat for several. Overrides the config.")
    var listen: [String] = []

    @Option(name: .customLong("data-dir"), help: "Data directory. Overrides the config.")
    var dataDir: String?

    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical.")
    var logLevel: String?

    /// Defaults, then the file, then `ROOST_*`, then these flags.
    func load() throws -> RoostConfig {
        var result = RoostConfig()
        let environment = ProcessInfo.processInfo.environment
        if let path = config ?? environment["ROOST_CONFIG"] { try result.apply(yamlFile: path) }
        try result.apply(environment: environment)
        if !listen.isEmpty { try result.set("listen", listen, source: "--listen") }
        if let dataDir { try result.set("data_dir", dataDir, source: "--data-dir") }
        if let logLevel { try result.set("log_level", logLevel, source: "--log-level") }
        return result
    }
}

struct Serve: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Run the daemon (the default).")

    @OptionGroup var options: ConfigOptions

    func run() throws {
        let config: RoostConfig
        do { config = try options.load() } catch {
            FileHandle.standardError.write(Data("roostd: \(error)\n".utf8))
            throw ExitCode(2)
        }
        // The journal under systemd (or when configured), else readable stderr lines.
        let level = LogLevelBox(Logger.Level(rawValue: config.logLevel) ?? .info)
        // Every entry is also kept in LogRing.shared for the admin console's log view.
        let sink = RecordingLogSink(DaemonLogging.sink(for: DaemonLogging.Target(rawValue: config.logTarget) ?? .auto))
        DaemonLogging.bootstrap(sink: sink, level: level)
        Telemetry.bootstrap(declared: RoostMetrics.declared)
        RoostMetrics.registerAtStart()
        let logger = Logger(label: "roostd")

        var services = DaemonServices()
        services.inheritedSockets = SocketActivation.takeListeningDescriptors()
        if !services.inheritedSockets.isEmpty {
            logger.info("using sockets from systemd", metadata: ["count": "\(services.inheritedSockets.count)"])
        }
        services.logLevel = level
        services.accessLog = AccessLog(sink: sink, level: level)
        let options = self.options
        services.reloadConfig = { try options.load() }
        do {
            try RoostServer(config: config, logger: logger, services: services).run()
        } catch {
            logger.critical("roostd cannot start", metadata: ["error": "\(error)"])
            throw ExitCode(1)
        }
    }
}

struct CheckConfig: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "check-config", abstract: "Validate the configuration and print it.")

    @OptionGroup var options: ConfigOptions

    func run() throws {
        let c = try options.load()
        _ = try c.corsPolicy()
        for line in c.settingLines { print(line) }
        print("rate_limits: " + RateClass.allCases.map { "\($0.name) \(c.rateLimits[$0])" }.joined(separator: ", ") + ", callers \(c.rateLimits.callers)")
        if c.filesStore == .s3 {
            print("s3: \(c.objectStoreLocation ?? "") at \(c.s3.endpoint), region \(c.s3.region), credentials "
                  + "\(c.s3.accessKeyID.isEmpty || c.s3.secretAccessKey.isEmpty ? "unset" : "set")\(c.s3.problem.map { "; " + $0 } ?? "")")
        }
        if let push = c.push.summary { print(push) }
        for (name, collection) in c.collections.sorted(by: { $0.key < $1.key }) {
            let refs = collection.references.map { "\($0.field)->\($0.target)(\($0.onDelete.rawValue))" }
            let level = BuiltInRules(rawValue: name)?.level(c) ?? c.permission(of: name).rawValue
            print("collection \(name): permission=\(level) indexes=\(collection.indexes.map(\.description)) references=\(refs)"
                  + (collection.pushSync ? " push_sync" : ""))
            if let schema = collection.schema { print("collection \(name): schema=\(schema.source.jsonText)") }
            if let rules = collection.rules {
                for (operation, rule) in [("read", rules.read), ("create", rules.create), ("update", rules.update), ("delete", rules.delete)] {
                    if let rule { print("collection \(name): rules.\(operation)=\(rule.source.jsonText)") }
                }
            }
        }
    }
}

struct SettingsTable: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "settings", abstract: "Print every scalar setting with its default and doc (docs/CONFIGURATION.md's table).")

    @Flag(name: .long, help: "As the Markdown table of docs/CONFIGURATION.md.")
    var markdown = false

    func run() throws {
        let table = RoostConfig.settingsMarkdown()
        if markdown { print(table, terminator: "") } else {
            for line in table.split(separator: "\n").dropFirst(2) {
                let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
                print("\(cells[0].replacingOccurrences(of: "`", with: "")) = \(cells[1].replacingOccurrences(of: "`", with: "")): \(cells[4])")
            }
        }
    }
}

struct CheckReferences: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check-references",
        abstract: "List the dangling references of the declared reference fields (exit 1 when there are some).")

    @OptionGroup var options: ConfigOptions

    func run() throws {
        try listFindings("check-references", noun: "dangling reference") { try RoostServer.checkReferences(config: try options.load()) }
    }
}

/// A check command's ending: one finding a line on stdout, their count on
/// stderr; exit 1 when there are some, 2 when the check could not run.
func listFindings(_ command: String, noun: String, _ find: () throws -> [String]) throws {
    let lines: [String]
    do { lines = try find() } catch {
        FileHandle.standardError.write(Data("roostd \(command): \(error)\n".utf8))
        throw ExitCode(2)
    }
    for line in lines { print(line) }
    FileHandle.standardError.write(Data("\(lines.count) \(noun)\(lines.count == 1 ? "" : "s")\n".utf8))
    if !lines.isEmpty { throw ExitCode(1) }
}

struct CheckSchema: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check-schema",
        abstract: "List the stored documents that fail their collection's JSON Schema (exit 1 when there are some).")

    @OptionGroup var options: ConfigOptions
    @Argument(help: "Collections to check (default: every collection with a schema).") var collections: [String] = []

    func run() throws {
        try listFindings("check-schema", noun: "violation") { try RoostServer.checkSchemas(config: try options.load(), only: collections) }
    }
}

struct ExportCollections: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export-collections",
        abstract: "Print the collections set up at run time as the config file's collections: mapping (YAML).")

    @OptionGroup var options: ConfigOptions

    func run() throws {
        do { print(try RoostServer.exportCollections(config: try options.load()), terminator: "") } catch {
            FileHandle.standardError.write(Data("roostd export-collections: \(error)\n".utf8))
            throw ExitCode(2)
        }
    }
}

struct Hooks: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List the business-logic hooks the configuration registers, in run order (priority, then registration).")

    @OptionGroup var options: ConfigOptions

    func run() throws {
        let config = try options.load()
        do { print(try RoostServer.hookListing(config: config, logger: Logger(label: "roostd"))) } catch {
            FileHandle.standardError.write(Data("roostd hooks: scripts: \(error)\n".utf8))
            throw ExitCode(1)
        }
    }
}

struct CheckScripts: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check-scripts",
        abstract: "Compile every script of scripts_dir and list what each registers, with file:line (exit 1 on an error).")

    @OptionGroup var options: ConfigOptions

    func run() throws {
        let config = try options.load()
        do {
            let set = try RoostServer.compileScripts(config: config, logger: Logger(label: "roostd"))
            let lines = set.lines
            for line in lines { print(line) }
            let kib = (set.idleStateBytes + 1023) / 1024
            FileHandle.standardError.write(Data(("scripts in \(config.scriptsDir): \(lines.count) handler\(lines.count == 1 ? "" : "s"); "
                + "an idle Lua state with them loaded holds \(kib) KiB\n").utf8))
        } catch {
            FileHandle.standardError.write(Data("roostd check-scripts: \(error)\n".utf8))
            throw ExitCode(1)
        }
    }
}

struct TakeBackup: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup",
        abstract: "Take an online, verified backup of the data directory into a backups directory (the daemon may keep serving).")

    @OptionGroup var options: ConfigOptions

    @Option(name: .long, help: "The backups directory (default: backups.dir).")
    var to: String?

    @Option(name: .customLong("max-rate"), help: "Bytes per second to copy at most, e.g. 50M.")
    var maxRate: String?

    @Option(name: .long, help: "Complete backups to keep in the directory (default: all).")
    var keep: Int?

    func run() throws {
        do {
            let rate = try maxRate.map { text in
                guard let r = RoostConfig.bytes(text), r > 0 else { throw ValidationError("--max-rate must be bytes per second, such as 50M") }
                return r
            }
            print(try BackupCommands.backup(config: try options.load(), to: to, maxRate: rate, keep: keep))
        } catch let e as ValidationError { throw e } catch {
            FileHandle.standardError.write(Data("roostd backup: \(error)\n".utf8))
            throw ExitCode(1)
        }
    }
}

struct Restore: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Restore a backup into a data directory (roostd must be stopped). The backup is verified first.")

    @Option(name: .long, help: "A backup, or a backups directory (its newest backup).")
    var from: String

    @Option(name: .customLong("data-dir"), help: "The data directory to restore into.")
    var dataDir: String

    @Flag(name: .long, help: "Replace Roost's files in a data directory that is not empty.")
    var force = false

    func run() throws {
        do { print(try BackupCommands.restore(from: from, dataDir: dataDir, force: force)) } catch {
            FileHandle.standardError.write(Data("roostd restore: \(error)\n".utf8))
            throw ExitCode(1)
        }
    }
}

struct VerifyBackup: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify-backup",
        abstract: "Check a backup (or every backup in a directory): manifest, integrity_check, every file's SHA-256.")

    @Argument(help: "A backup or a backups directory.")
    var dir: String

    func run() throws {
        let (ok, text) = BackupCommands.verify(dir)
        print(text)
        if !ok { throw ExitCode(1) }
    }
}

RoostCommand.main()
