import Foundation
import Jobs
import Logging
import Store

/// Keeps this node's copy of the collections set up at run time equal to
/// the database's: a thread reads the highest settings version every
/// `interval` seconds (one small read on a reader) and, when it moved,
/// reads every record, installs them (`ReloadableSettings.apply(runtime:)`)
/// and calls `changed`, which starts index builds and reference updates.
/// So a change made on one node holds on every node sharing the database
/// within about `interval`; on the node that made it, before its answer.
final class CollectionSettingsSync: Sendable {
    let pools: StorePools
    let settings: ReloadableSettings
    let interval: Double
    let logger: Logger
    /// Runs after every change installed, on a serial queue of its own.
    let changed: LockedBox<@Sendable () -> Void> = LockedBox({})
    private let stopped = LockedBox(false)
    private let installed = LockedBox<Int64>(-1)
    private let lock = NSLock()
    private let followUps = DispatchQueue(label: "collection-changed")

    init(pools: StorePools, settings: ReloadableSettings, interval: Double = 0.5, logger: Logger) {
        self.pools = pools
        self.settings = settings
        self.interval = interval
        self.logger = logger
    }

    /// Reads and installs the stored settings into `settings` (start-up,
    /// before serving and before the sync exists: references and indexes are
    /// set up from them next).
    static func load(_ reader: any DocumentReading, into settings: ReloadableSettings, logger: Logger) throws {
        var runtime: [String: RuntimeCollection] = [:]
        for record in try reader.collectionSettings() where record.settings != nil {
            do { runtime[record.name] = try RuntimeCollection(record) } catch {
                logger.error("stored collection settings not applied", metadata: ["collection": "\(record.name)", "error": "\(error)"])
            }
        }
        settings.apply(runtime: runtime)
    }

    func start() {
        NamedThread.start("collection-sync") { [self] in
            while !stopped.get() {
                Thread.sleep(forTimeInterval: interval)
                guard !stopped.get() else { break }
                let known = installed.get()
                let result = pools.onReader { reader -> (Int64, [CollectionSettingsRecord])? in
                    let version = try reader.collectionSettingsVersion()
                    return version == known ? nil : (version, try reader.collectionSettings())
                }
                switch result {
                case .success(let read?)?: install(read.1, version: read.0)
                case .failure(let error)?: logger.warning("cannot read the collections' settings", metadata: ["error": "\(error)"])
                default: break
                }
            }
        }
    }

    func stop() { stopped.set(true) }

    /// Installs `records` (all of them, as of `version`), unless a newer set is installed already.
    func install(_ records: [CollectionSettingsRecord], version: Int64) {
        lock.lock()
        guard version > installed.get() else { lock.unlock(); return }
        var runtime: [String: RuntimeCollection] = [:]
        for record in records where record.settings != nil {
            do { runtime[record.name] = try RuntimeCollection(record) } catch {
                logger.error("stored collection settings not applied", metadata: ["collection": "\(record.name)", "error": "\(error)"])
            }
        }
        let changes = settings.apply(runtime: runtime)
        installed.set(version)
        lock.unlock()
        if !changes.isEmpty {
            logger.notice("collection settings applied", metadata: ["version": "\(version)", "changes": "\(changes.joined(separator: "; "))"])
        }
        // Off this thread: the writer's completion installs committed changes, and what follows waits on the writer.
        let changed = self.changed.get()
        // One at a time, in order, so the last settings are the ones applied.
        followUps.async { changed() }
    }

    /// Installs one record the admin API just committed on this node, so
    /// its answer already holds here; the next poll reads every record again
    /// (another node's change may have come between).
    func installCommitted(_ record: CollectionSettingsRecord) {
        var records = settings.snapshot.runtime.values.map {
            CollectionSettingsRecord(name: $0.name, settings: $0.json.jsonText, version: $0.version, updatedAt: $0.updatedAt)
        }.filter { $0.name != record.name }
        records.append(record)
        lock.lock()
        installed.set(-1)
        lock.unlock()
        install(records, version: record.version)
        installed.set(-1)
    }
}
