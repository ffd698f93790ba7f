import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Downloads that wait for the network and survive app relaunches, into the
/// cache ``RoostFiles/localURL(of:thumbnailSize:in:)`` reads.
///
/// ``enqueue(_:thumbnailSize:)`` records the wish and returns at once;
/// ``sendPending()`` fetches what is queued, oldest first, reporting progress
/// as ``Event``s. Bytes go to a partial file in the queue's directory as they
/// arrive; a download cut short (offline, the app killed) goes on from there
/// with a `Range` request (`If-Range` the file's ETag: the server sends it
/// whole again if the bytes differ), and the finished file is moved into the
/// cache, where `localURL` then finds it without the server. A file the
/// caller may not read, or that is gone, fails (not retried).
///
/// On Apple platforms, `backgroundSessionIdentifier` hands downloads to a
/// background `URLSession` that goes on while the app is suspended (its
/// resume data is kept when one is cut short); elsewhere, and without it, a
/// foreground session fetches them.
///
/// ```swift
/// let downloads = try FileDownloadQueue(client: roost, directory: appSupport.appendingPathComponent("downloads"))
/// let item = try downloads.enqueue(place.imageId, thumbnailSize: 512)
/// for await event in downloads.events() {
///     if case .progress(item.id, let p) = event { bar.progress = p.fraction ?? 0 }
///     if case .downloaded(item.id, let url) = event { image = UIImage(contentsOfFile: url.path) }
/// }
/// ```
public final class FileDownloadQueue: Sendable {
    /// One queued download.
    public struct Item: Codable, Sendable, Hashable, Identifiable {
        /// The queue's id for it: the file id, with `-<size>` for a thumbnail (its name in the cache).
        public let id: String
        public let fileID: String
        public let thumbnailSize: Int?
        public let queuedAt: Date
        public internal(set) var state: State
        /// Attempts that got no answer or a server failure.
        public internal(set) var attempts: Int
        /// The ETag of the bytes the partial file holds (to resume only onto the same bytes).
        var etag: String?

        public enum State: Codable, Sendable, Hashable {
            case queued
            case downloading
            /// In the cache, at this local file URL.
            case downloaded(URL)
            /// Refused by the server (its status, error code and sentence); not retried.
            case failed(status: Int, code: String, message: String)
        }

        public var isPending: Bool {
            switch state { case .queued, .downloading: return true; default: return false }
        }
    }

    public enum Event: Sendable, Equatable {
        case queued(String)
        case progress(String, TransferProgress)
        case downloaded(String, URL)
        case failed(String, RoostError)
    }

    /// What one ``sendPending()`` did.
    public struct Report: Sendable, Equatable {
        public var downloaded: [String] = []
        public var failed: [String] = []
        /// Still queued (offline, or a server failure to try again).
        public var remaining: Int = 0
    }

    let client: RoostClient
    let directory: URL
    let cache: URL
    let maxAttempts: Int
    let state: Locked<[String: Item]>
    private let watchers = Locked<[UUID: AsyncStream<Event>.Continuation]>([:])
    private let runs = SerialRuns<Report>()
    private let reconnectKey = Locked<UUID?>(nil)
    let background: BackgroundDownloads?

    /// A queue keeping its records and partial files in `directory`, and
    /// finished files in `cache` (RoostKit's caches folder by default, as
    /// `localURL`). With `automatic`, it fetches what is pending now and
    /// whenever the client reconnects.
    public init(client: RoostClient, directory: URL, cache: URL? = nil, automatic: Bool = true, maxAttempts: Int = 5,
                backgroundSessionIdentifier: String? = nil) throws {
        self.client = client
        self.directory = directory
        let cache = cache ?? RoostFiles.defaultCache
        self.cache = cache
        self.maxAttempts = maxAttempts
        for folder in [directory, cache] {
            do { try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true) } catch {
                throw RoostError.localStore("cannot make \(folder.path): \(error)")
            }
        }
        let background = BackgroundDownloads.make(identifier: backgroundSessionIdentifier)
        var loaded: [String: Item] = [:]
        for name in (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [] where name.hasSuffix(".json") {
            guard let data = try? Data(contentsOf: directory.appendingPathComponent(name)),
                  var item = try? JSONDecoder().decode(Item.self, from: data) else { continue }
            if item.state == .downloading, background == nil { item.state = .queued }  // killed mid-download
            // An app's container path can change between launches (iOS, after an update): find it anew.
            if case .downloaded = item.state { item.state = .downloaded(cache.appendingPathComponent(item.id)) }
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

    /// Every item, oldest first.
    public var items: [Item] { state.value.values.sorted { ($0.queuedAt, $0.id) < ($1.queuedAt, $1.id) } }

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

    /// Queues file `id` (or its thumbnail of `thumbnailSize`); returns at
    /// once. One already in the cache is `downloaded` at once; one already
    /// queued is returned as it is.
    @discardableResult
    public func enqueue(_ id: String, thumbnailSize: Int? = nil) throws -> Item {
        let key = RoostFiles.cacheName(of: id, thumbnailSize: thumbnailSize)
        switch item(key)?.state {
        case .queued?, .downloading?: return item(key)!
        case .downloaded(let url)? where FileManager.default.fileExists(atPath: url.path): return item(key)!
        default: break  // new, failed before, or evicted from the cache: (again) from the start
        }
        var item = Item(id: key, fileID: id, thumbnailSize: thumbnailSize, queuedAt: Date(), state: .queued, attempts: 0)
        if FileManager.default.fileExists(atPath: cachedURL(key).path) { item.state = .downloaded(cachedURL(key)) }
        try save(item)
        emit(.queued(key))
        if case .downloaded(let url) = item.state { emit(.downloaded(key, url)) } else if reconnectKey.value != nil { sendInBackground() }
        return item
    }

    /// Forgets an item (not one being fetched now): its record and partial
    /// bytes; a finished file stays in the cache.
    @discardableResult
    public func remove(_ id: String) -> Bool {
        let removed = state.update { items -> Bool in
            guard let item = items[id], item.state != .downloading else { return false }
            items[id] = nil
            return true
        }
        if removed {
            try? FileManager.default.removeItem(at: recordURL(id))
            try? FileManager.default.removeItem(at: partialURL(id))
            try? FileManager.default.removeItem(at: resumeDataURL(id))
        }
        return removed
    }

    /// Waits for the item (fetching pending items meanwhile) and returns its
    /// local URL; throws the server's refusal, or, when still queued after a
    /// try (offline), the error that kept it.
    public func downloaded(_ id: String) async throws -> URL {
        var lastError: RoostError?
        for _ in 0..<2 {
            switch item(id)?.state {
            case .downloaded(let url)?: return url
            case .failed(let status, let code, let message)?:
                throw RoostError.server(ServerError(status: status, code: .init(rawValue: code), message: message))
            case nil: throw RoostError.localStore("no queued download \(id)")
            default: break
            }
            let report = await sendPending()
            lastError = report.remaining > 0 ? lastFailure.value : nil
        }
        if case .downloaded(let url)? = item(id)?.state { return url }
        throw lastError ?? RoostError.unreachable("the download is still queued")
    }

    let lastFailure = Locked<RoostError?>(nil)

    /// Fetches every queued item, oldest first, one at a time; a call made
    /// while one runs waits for it, then runs.
    @discardableResult
    public func sendPending() async -> Report {
        await runs.run { [self] in await self.drain() }
    }

    func sendInBackground() { Task { [weak self] in _ = await self?.sendPending() } }

    private func drain() async -> Report {
        var report = Report()
        let pending = items.filter { $0.state == .queued }
        for (index, queued) in pending.enumerated() {
            if Task.isCancelled { report.remaining += pending.count - index; break }
            if let background, background.send(queued, for: self) { continue }
            switch await fetch(queued) {
            case .downloaded: report.downloaded.append(queued.id)
            case .failed: report.failed.append(queued.id)
            case .retryLater: report.remaining += 1
            case .stop:
                report.remaining += pending.count - index
                return report
            }
        }
        return report
    }

    enum Outcome { case downloaded, failed, retryLater, stop }

    /// The request for `item`: a `Range` from what the partial file holds, when it holds bytes of a known ETag.
    func request(for item: Item) -> URLRequest {
        var headers: [String: String] = [:]
        let have = partialSize(item.id)
        if have > 0, let etag = item.etag {
            headers["Range"] = "bytes=\(have)-"
            headers["If-Range"] = etag
        }
        if let size = item.thumbnailSize {
            return client.request("GET", ["files", item.fileID, "thumbnail"], query: [("size", String(size))], headers: headers)
        }
        return client.request("GET", ["files", item.fileID], headers: headers)
    }

    private func fetch(_ queued: Item) async -> Outcome {
        var item = queued
        item.state = .downloading
        try? save(item)
        let id = item.id
        // Bytes from a cut-short attempt: resume onto them only if we know whose they are.
        if partialSize(id) > 0, item.etag == nil { item.etag = await etag(of: item) }
        let request = request(for: item)
        if request.value(forHTTPHeaderField: "Range") == nil { try? FileManager.default.removeItem(at: partialURL(id)) }
        do {
            let (data, response) = try await client.transport.download(request, to: partialURL(id)) { [weak self] p in
                self?.emit(.progress(id, p))
            }
            if response.statusCode == 416 {  // what we hold is not a prefix of the bytes: start again
                try? FileManager.default.removeItem(at: partialURL(id))
                item.etag = nil
                return fail(&item, .invalidResponse("416 resuming \(id)"))
            }
            _ = try client.check(request, data, response)
            return finish(&item)
        } catch {
            let failure = RoostError.from(transport: error)
            lastFailure.set(failure)
            return fail(&item, failure)
        }
    }

    /// The ETag the server gives `item`'s bytes (a `HEAD`), or nil.
    func etag(of item: Item) async -> String? {
        var head = request(for: Item(id: item.id, fileID: item.fileID, thumbnailSize: item.thumbnailSize, queuedAt: item.queuedAt,
                                     state: .queued, attempts: 0))
        head.httpMethod = "HEAD"
        guard let (_, response) = try? await client.transport.send(head), response.statusCode == 200 else { return nil }
        return response.value(forHTTPHeaderField: "ETag")
    }

    /// Moves the finished partial file into the cache.
    func finish(_ item: inout Item) -> Outcome {
        let target = cachedURL(item.id)
        if !FileManager.default.fileExists(atPath: target.path) {
            do { try FileManager.default.moveItem(at: partialURL(item.id), to: target) } catch {
                if !FileManager.default.fileExists(atPath: target.path) {
                    return fail(&item, .localStore("cannot cache \(item.id): \(error)"))
                }
            }
        }
        try? FileManager.default.removeItem(at: partialURL(item.id))
        try? FileManager.default.removeItem(at: resumeDataURL(item.id))
        item.state = .downloaded(target)
        item.etag = nil
        try? save(item)
        emit(.downloaded(item.id, target))
        return .downloaded
    }

    /// Records a failed attempt and says what to do next (as ``FileUploadQueue`` does).
    func fail(_ item: inout Item, _ failure: RoostError) -> Outcome {
        item.state = .queued
        switch failure {
        case .server where failure.stopsSync:
            try? save(item)
            return .stop
        case .server(let e) where e.status >= 500 || e.status == 408:
            item.attempts += 1
            if item.attempts >= maxAttempts { return giveUp(&item, e) }
            try? save(item)
            return .retryLater
        case .server(let e):
            return giveUp(&item, e)
        case .invalidResponse, .localStore:
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
        item.etag = nil
        try? save(item)
        try? FileManager.default.removeItem(at: partialURL(item.id))
        try? FileManager.default.removeItem(at: resumeDataURL(item.id))
        emit(.failed(item.id, .server(error)))
        return .failed
    }

    func save(_ item: Item) throws {
        state.update { $0[item.id] = item }
        do { try JSONEncoder().encode(item).write(to: recordURL(item.id), options: .atomic) } catch {
            throw RoostError.localStore("cannot save the download record: \(error)")
        }
    }

    func partialSize(_ id: String) -> Int64 {
        ((try? FileManager.default.attributesOfItem(atPath: partialURL(id).path))?[.size] as? NSNumber)?.int64Value ?? 0
    }

    func recordURL(_ id: String) -> URL { directory.appendingPathComponent("\(id).json") }
    func partialURL(_ id: String) -> URL { directory.appendingPathComponent("\(id).part") }
    func resumeDataURL(_ id: String) -> URL { directory.appendingPathComponent("\(id).resume") }
    func cachedURL(_ id: String) -> URL { cache.appendingPathComponent(id) }
}
