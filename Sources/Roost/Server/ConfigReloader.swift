import Daemon
import EventLoop
import Foundation
import Jobs
import Logging

/// SIGHUP: re-reads the configuration off the event loop, applies what can
/// change at run time (log level, collection permissions, private user
/// fields, the TLS certificate and key) and logs what changed and what needs
/// a restart. Reloads run one at a time.
final class ConfigReloader: @unchecked Sendable {
    private let lock = NSLock()
    private var current: RoostConfig
    private let load: @Sendable () throws -> RoostConfig
    private let settings: ReloadableSettings
    private let level: LogLevelBox?
    private let notifier: SystemdNotifier
    private let tls: TLSContext?
    /// The scripts, loaded again from the new `scripts_dir` on every reload.
    private let scripts: RoostScripts?
    private let logger: Logger
    /// Runs after each reload that read the new configuration (set before the first SIGHUP).
    var afterReload: @Sendable () -> Void = {}

    init(config: RoostConfig, load: @escaping @Sendable () throws -> RoostConfig, settings: ReloadableSettings,
         level: LogLevelBox?, notifier: SystemdNotifier, tls: TLSContext? = nil, scripts: RoostScripts? = nil, logger: Logger) {
        self.scripts = scripts
        current = config
        self.load = load
        self.settings = settings
        self.level = level
        self.notifier = notifier
        self.tls = tls
        self.logger = logger
    }

    /// Starts a reload on its own thread; returns at once (safe on a loop).
    func begin() {
        NamedThread.start("config-reload") { [self] in reload() }
    }

    /// Reloads now, on the calling thread. Returns the changes applied.
    @discardableResult
    func reload() -> [String] {
        lock.lock()
        defer { lock.unlock() }
        notifier.reloading(true)
        defer { notifier.reloading(false) }
        let new: RoostConfig
        do { new = try load() } catch {
            logger.error("configuration reload failed; keeping the running settings", metadata: ["error": "\(error)"])
            return []
        }
        // Every changed setting is either applied here (and listed) or named as needing a restart.
        var changes = RoostConfig.changedSettings(current, new).filter { $0.onReload == .applied }.map { $0.change(current, new) }
        changes += settings.apply(new)
        if let change = reloadTLS(new) { changes.append(change) }
        if let change = scripts?.reload(directory: new.scriptsDir) { changes.append(change) }
        let newLevel = Logger.Level(rawValue: new.logLevel)
        let restart = ReloadableSettings.needsRestart(current, new)
        current = new
        // Logged at the old level, so a reload to a quieter level still says what it did.
        logger.notice("configuration reloaded", metadata: [
            "changes": changes.isEmpty ? "none" : "\(changes.joined(separator: "; "))",
        ])
        if !restart.isEmpty {
            logger.warning("changed settings take effect only after a restart", metadata: ["settings": "\(restart.joined(separator: ","))"])
        }
        if let level, let newLevel { level.set(newLevel) }
        afterReload()
        return changes
    }

    /// Reads the certificate and key again (renewals keep their paths), for
    /// new connections; a pair that does not load keeps the running one.
    private func reloadTLS(_ new: RoostConfig) -> String? {
        guard let tls, let certificate = new.tls.certificate, let key = new.tls.key else { return nil }
        do {
            try tls.reload(certificate: certificate, key: key)
            return "tls: \(tls.summary)"
        } catch {
            logger.error("TLS certificate reload failed; keeping the running certificate", metadata: ["error": "\(error)"])
            return nil
        }
    }
}
