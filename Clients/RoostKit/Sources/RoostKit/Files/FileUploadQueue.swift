import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Uploads that survive being offline and app relaunches.
///
/// ``enqueue(_:contentType:name:)`` copies the bytes into the queue's
/// directory and returns at once, online or not; ``sendPending()`` uploads
/// what is queued, oldest first, with progress reported as ``Event``s. An
/// upload that finds no network stays queued and is sent on the next
/// ``sendPending()``: the queue calls it itself when the client reconnects
/// (foreground, network change: ``RoostClient/reconnectLiveStreams()``) and
/// at start. A file whose answer was lost (the connection dropped after the
/// server stored it, or the app was killed mid-upload) is looked up among
/// your files by its SHA-256 before it is sent again, so it is not stored twice.
/// The server refusing a file (a type or size it does not take, a damaged
/// image) marks it ``Item/State-swift.enum/failed(status:code:message:)``: shown, never retried.
///
/// On Apple platforms, `backgroundSessionIdentifier` sends the files
/// through a background `URLSession`, which goes on while the app is
/// suspended (see ``handleBackgroundEvents(identifier:completion:)``);
/// elsewhere, and without it, a foreground session sends them.
///
/// ```swift
/// let uploads = try FileUploadQueue(client: roost, directory: appSupport.appendingPathComponent("uploads"))
/// let item = try uploads.enqueue(jpeg, contentType: "image/jpeg", name: "place.jpg")
/// for await event in uploads.events() {
///     if case .progress(item.id, let p) = event { bar.progress = p.fraction ?? 0 }
///     if case .uploaded(item.id, let meta) = event { place.imageId = meta.id }
/// }
/// ```
public final class FileUploadQueue: Sendable {
    /// One queued upload.
    public struct Item: Codable, Sendable, Hashable, Identifiable {
        /// The queue's id for it (not the server's file id: see ``State-swift.enum/uploaded(_:)``).
        public let id: String
        public let contentType: String
        /// A name for the app's list (kept here only: the queue sends the raw
        /// bytes, and the server records a name only from a multipart upload).
        public let name: String?
        /// Bytes.
        public let size: Int64
        public let queuedAt: Date
        public internal(set) var state: State
        /// Attempts that reached no answer or a server failure.
        public internal(set) var attempts: Int
        /// An attempt may have reached the server without its answer reaching us.
        var uncertain: Bool

        public enum State: Codable, Sendable, Hashable {
            /// Waiting to be sent (offline, or not tried yet).
            case queued
            /// Being sent.
            case uploading
            /// Stored by the server.
            case uploaded(FileMeta)
            /// Refused by the server (its status, error code and sentence); not retried.
            case failed(status: Int, code: String, message: String)
        }

        /// Still to be sent.
        public var isPending: Bool {
            switch state { case .queued, .uploading: return true; default: return false }
        }
    }

    /// What the queue reports as it works.
    public enum Event: Sendable, Equatable {
        case queued(String)
        case progress(String, TransferProgress)
        case uploaded(String, FileMeta)
        /// Refused by the server (not retried), or given up after too many failures.
        case failed(String, RoostError)
    }

    /// What one ``sendPending()`` did.
    public struct Report: Sendable, Equatable {
        public var uploaded: [String] = []
        public var failed: [String] = []
        /// Still queued (offline, or a server failure to try again).
        public var remaining: Int = 0
        /// Found already stored after a lost answer, not sent again.
        public var recovered: Int = 0
    }

    let client: RoostClient
    let directory: URL
    /// Server failures (5xx) before an upload is given up.
    let maxAttempts: Int
    let state: Locked<[String: Item]>
    private let watchers = Locked<[UUID: AsyncStream<Event>.Continuation]>([:])
    private let runs = SerialRuns<Report>()
    private let reconnectKey = Locked<UUID?>(nil)
    let background: BackgroundUploads?

    /// A queue keeping its files and records in `directory` (made if needed);
    /// items queued by an earlier launch are picked up. With `automatic`,
    /// it sends what is pending now and whenever the client reconnects.
    public init(client: RoostClient, directory: URL, automatic: Bool = true, maxAttempts: Int = 5,
                backgroundSessionIdentifier: String? = nil) throws {
        self.client = client
        self.directory = directory
        self.maxAttempts = maxAttempts
        do { try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true) } catch {
            throw RoostError.localStore("cannot make \(directory.path): \(error)")
        }
        let background = BackgroundUploads.make(identifier: backgroundSessionIdentifier)
        var loaded: [String: Item] = [:]
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        for name in names where name.hasSuffix(".json") {
            guard let data = try? Data(contentsOf: directory.appendingPathComponent(name)),
                  var item = try? JSONDecoder().decode(Item.self, from: data) else { continue }
            // Killed mid-upload: the server may have it. (A background session
            // may still be sending it: that session reconciles its own.)
            if item.state == .uploading, background == nil { item.state = .queued; item.uncertain = true }
            loaded[item.id] = item
        }
        state = Locked(loaded)
        self.background = background
        background?.attach(self)
        if automatic {
            reconnectKey.set(client.onReconnect { [weak self] in self?.sendInBackground() })
            sendInBackground()
        }
    }

    deinit {
        if let key = reconnectKey.value { client.removeReconnectHandler(key) }
        for watcher in watchers.value.values { watcher.finish() }
    }

    /// Every item, oldest first: queued, sending, uploaded and failed.
    public var items: [Item] { state.value.values.sorted { ($0.queuedAt, $0.id) < ($1.queuedAt, $1.id) } }

    /// The item with this queue id.
    public func item(_ id: String) -> Item? { state.value[id] }

    /// The queue's events from now on.
    public func events() -> AsyncStream<Event> {
        let (stream, continuation) = AsyncStream<Event>.makeStream(bufferingPolicy: .unbounded)
        let key = UUID()
        continuation.onTermination = { [weak self] _ in _ = self?.watchers.update { $0.removeValue(forKey: key) } }
        watchers.update { $0[key] = continuation }
        return stream
    }

    func emit(_ event: Event) { for w in watchers.value.values { w.yield(event) } }

    /// Queues `data` for upload as `contentType`; returns at once. Send it
    /// with ``sendPending()`` (automatic queues do that themselves).
    @discardableResult
    public func enqueue(_ data: Data, contentType: String, name: String? = nil) throws -> Item {
        let id = UUID().uuidString.lowercased()
        do { try data.write(to: bytesURL(id), options: .atomic) } catch {
            throw RoostError.localStore("cannot keep the upload: \(error)")
        }
        return try add(id: id, contentType: contentType, name: name, size: Int64(data.count))
    }

    /// Queues a copy of the file at `url` (so the app may delete its own).
    @discardableResult
    public func enqueue(contentsOf url: URL, contentType: String, name: String? = nil) throws -> Item {
        let id = UUID().uuidString.lowercased()
        do { try FileManager.default.copyItem(at: url, to: bytesURL(id)) } catch {
            throw RoostError.localStore("cannot copy \(url.path): \(error)")
        }
        let size = ((try? FileManager.default.attributesOfItem(atPath: bytesURL(id).path))?[.size] as? NSNumber)?.int64Value ?? 0
        return try add(id: id, contentType: contentType, name: name ?? url.lastPathComponent, size: size)
    }

    private func add(id: String, contentType: String, name: String?, size: Int64) throws -> Item {
        let item = Item(id: id, contentType: contentType, name: name, size: size, queuedAt: Date(), state: .queued,
                        attempts: 0, uncertain: false)
        try save(item)
        emit(.queued(id))
        if reconnectKey.value != nil { sendInBackground() }
        return item
    }

    /// Forgets an item: a finished one's record, or a queued one (not sent).
    /// An item being sent now is left alone (false).
    @discardableResult
    public func remove(_ id: String) -> Bool {
        let removed = state.update { items -> Bool in
            guard let item = items[id], item.state != .uploading else { return false }
            items[id] = nil
            return true
        }
        if removed {
            try? FileManager.default.removeItem(at: recordURL(id))
            try? FileManager.default.removeItem(at: bytesURL(id))
        }
        return removed
    }

    /// Waits for the item to be uploaded (sending pending items meanwhile)
    /// and returns its metadata; throws the server's refusal, or, when it is
    /// still queued after a send (offline), the error that kept it. With a
    /// background session the answer comes later, as an ``Event``: watch ``events()``.
    public func uploaded(_ id: String) async throws -> FileMeta {
        var lastError: RoostError?
        for _ in 0..<2 {
            switch item(id)?.state {
            case .uploaded(let meta)?: return meta
            case .failed(let status, let code, let message)?:
                throw RoostError.server(ServerError(status: status, code: .init(rawValue: code), message: message))
            case nil: throw RoostError.localStore("no queued upload \(id)")
            default: break
            }
            let report = await sendPending()
            lastError = report.remaining > 0 ? lastFailure.value : nil
        }
        if case .uploaded(let meta)? = item(id)?.state { return meta }
        throw lastError ?? RoostError.unreachable("the upload is still queued")
    }

    let lastFailure = Locked<RoostError?>(nil)

    /// Sends every queued item, oldest first, one at a time. Runs one after
    /// another: a call made while one runs waits for it, then runs.
    @discardableResult
    public func sendPending() async -> Report {
        await runs.run { [self] in await self.drain() }
    }

    func sendInBackground() { Task { [weak self] in _ = await self?.sendPending() } }

    private func drain() async -> Report {
        var report = Report()
        let pending = items.filter { $0.state == .queued }
        guard client.session != nil else {
            report.remaining = pending.count
            return report
        }
        for (index, queued) in pending.enumerated() {
            if Task.isCancelled { report.remaining += pending.count - index; break }
            if let background, background.send(queued, for: self) { continue }
            switch await sendOne(queued) {
            case .uploaded(let recovered): report.uploaded.append(queued.id); if recovered { report.recovered += 1 }
            case .failed: report.failed.append(queued.id)
            case .retryLater: report.remaining += 1
            case .stop:
                report.remaining += pending.count - index
                return report
            }
        }
        return report
    }

    enum Outcome { case uploaded(recovered: Bool), failed, retryLater, stop }

    private func sendOne(_ queued: Item) async -> Outcome {
        var item = queued
        // An earlier attempt may have been stored: look before sending again.
        if item.uncertain {
            do {
                if let meta = try await storedCopy(of: item) { finish(&item, meta); return .uploaded(recovered: true) }
            } catch let error as RoostError {
                lastFailure.set(error)
                return error.stopsSync ? .stop : .retryLater
            } catch { return .retryLater }
        }
        item.state = .uploading
        item.uncertain = true
        try? save(item)
        let id = item.id
        let request = client.request("POST", ["files"], body: Data(), contentType: item.contentType)
        do {
            let (data, response) = try await client.transport.upload(request, fromFile: bytesURL(id)) { [weak self] p in
                self?.emit(.progress(id, p))
            }
            finish(&item, try client.check(request, data, response).decode(FileMeta.self))
            return .uploaded(recovered: false)
        } catch {
            let failure = RoostError.from(transport: error)
            lastFailure.set(failure)
            return fail(&item, failure)
        }
    }

    /// Records a failed attempt and says what to do next.
    func fail(_ item: inout Item, _ failure: RoostError) -> Outcome {
        if case .network(let e) = failure, Self.neverSent.contains(e.code) { item.uncertain = false }
        item.state = .queued
        switch failure {
        case .server where failure.stopsSync:
            // Signed out, rate limited, overloaded or stopping: later, without counting it against the file.
            try? save(item)
            return .stop
        case .server(let e) where e.status >= 500 || e.status == 408:
            item.attempts += 1
            item.uncertain = false
            if item.attempts >= maxAttempts { return giveUp(&item, e) }
            try? save(item)
            return .retryLater
        case .server(let e):
            item.uncertain = false
            return giveUp(&item, e)
        case .invalidResponse:
            item.attempts += 1
            if item.attempts >= maxAttempts {
                return giveUp(&item, ServerError(status: 0, code: .unknown("InvalidResponse"), message: "\(failure)"))
            }
            try? save(item)
            return .retryLater
        default:
            // No answer: offline, or the connection dropped. Stop here; the next send goes on.
            item.attempts += 1
            try? save(item)
            return .stop
        }
    }

    private func giveUp(_ item: inout Item, _ error: ServerError) -> Outcome {
        item.state = .failed(status: error.status, code: error.code.rawValue, message: error.message)
        try? save(item)
        try? FileManager.default.removeItem(at: bytesURL(item.id))
        emit(.failed(item.id, .server(error)))
        return .failed
    }

    func finish(_ item: inout Item, _ meta: FileMeta) {
        item.state = .uploaded(meta)
        item.uncertain = false
        try? save(item)
        try? FileManager.default.removeItem(at: bytesURL(item.id))
        emit(.uploaded(item.id, meta))
    }

    /// The request cannot have reached the server.
    static let neverSent: Set<URLError.Code> = [
        .notConnectedToInternet, .cannotConnectToHost, .cannotFindHost, .dnsLookupFailed, .dataNotAllowed,
        .internationalRoamingOff, .callIsActive,
    ]

    /// The caller's file with the same bytes uploaded since the item was queued, if any.
    private func storedCopy(of item: Item) async throws -> FileMeta? {
        guard let data = try? Data(contentsOf: bytesURL(item.id), options: .mappedIfSafe) else { return nil }
        let digest = SHA256Digest.hex(of: data)
        return try await client.files.mine(limit: 100).files.first { $0.sha256 == digest && Int64($0.size) == item.size }
    }

    func save(_ item: Item) throws {
        state.update { $0[item.id] = item }
        do { try JSONEncoder().encode(item).write(to: recordURL(item.id), options: .atomic) } catch {
            throw RoostError.localStore("cannot save the upload record: \(error)")
        }
    }

    func recordURL(_ id: String) -> URL { directory.appendingPathComponent("\(id).json") }
    func bytesURL(_ id: String) -> URL { directory.appendingPathComponent("\(id).bytes") }
}
