import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The one seam between RoostKit and the network: send a request, get the
/// answer; or open a stream and read its bytes as they come.
///
/// ``URLSessionTransport`` is the real one. Tests inject their own, for
/// example one that refuses every request to simulate a device offline.
/// A transport throws when there is no answer: a `URLError` is kept as
/// ``RoostError/network(_:)``, anything else becomes ``RoostError/unreachable(_:)``.
public protocol HTTPTransport: Sendable {
    /// Sends `request` and returns the whole body with the response.
    func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse)

    /// Opens `request` as a stream: returns once the response head has
    /// arrived, then yields body chunks until the server ends the stream.
    func stream(_ request: URLRequest) async throws -> (HTTPURLResponse, AsyncThrowingStream<Data, Error>)

    /// Sends `request` with the bytes of `file` as its body, reporting bytes
    /// sent as they go. The default reads the file and calls ``send(_:)``
    /// (progress once, at the end); ``URLSessionTransport`` streams it from
    /// the file with an upload task.
    func upload(_ request: URLRequest, fromFile file: URL,
                progress: @escaping @Sendable (TransferProgress) -> Void) async throws -> (Data, HTTPURLResponse)

    /// Sends `request` and writes the body of a 2xx answer to `destination`,
    /// reporting bytes received as they arrive; any other answer's body is
    /// returned instead (an error to read). A 206 (the answer to a `Range`
    /// request) is appended to what `destination` holds, so an interrupted
    /// download resumes; any other 2xx replaces it. The default calls ``send(_:)``.
    func download(_ request: URLRequest, to destination: URL,
                  progress: @escaping @Sendable (TransferProgress) -> Void) async throws -> (Data, HTTPURLResponse)
}

extension HTTPTransport {
    public func upload(_ request: URLRequest, fromFile file: URL,
                       progress: @escaping @Sendable (TransferProgress) -> Void) async throws -> (Data, HTTPURLResponse) {
        var r = request
        r.httpBody = try Data(contentsOf: file, options: .mappedIfSafe)
        let answer = try await send(r)
        let size = Int64(r.httpBody?.count ?? 0)
        progress(TransferProgress(completed: size, total: size))
        return answer
    }

    public func download(_ request: URLRequest, to destination: URL,
                         progress: @escaping @Sendable (TransferProgress) -> Void) async throws -> (Data, HTTPURLResponse) {
        let (data, response) = try await send(request)
        guard (200..<300).contains(response.statusCode) else { return (data, response) }
        if response.statusCode == 206, let file = try? FileHandle(forWritingTo: destination) {
            defer { try? file.close() }
            let start = try file.seekToEnd()
            try file.write(contentsOf: data)
            let total = Int64(start) + Int64(data.count)
            progress(TransferProgress(completed: total, total: total))
        } else {
            try data.write(to: destination, options: .atomic)
            progress(TransferProgress(completed: Int64(data.count), total: Int64(data.count)))
        }
        return (Data(), response)
    }
}

/// ``HTTPTransport`` over `URLSession`.
public struct URLSessionTransport: HTTPTransport {
    let session: URLSession

    /// Uses `session` (an ephemeral session by default: RoostKit keeps its own token).
    public init(session: URLSession = URLSession(configuration: .ephemeral)) {
        self.session = session
    }

    public func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        // A request in a task already cancelled is never started: Apple's URLSession throws at once, while
        // swift-corelibs-foundation starts it and cancels it as it may be finishing (a crash in its task registry).
        try Task.checkCancellation()
        let (data, response) = try await session.data(for: request)
        guard let http = response as? HTTPURLResponse else { throw RoostError.invalidResponse("not HTTP") }
        return (data, http)
    }

    public func stream(_ request: URLRequest) async throws -> (HTTPURLResponse, AsyncThrowingStream<Data, Error>) {
        try Task.checkCancellation()  // as in `send`
        let relay = StreamRelay()
        // The caller's configuration (proxy, headers, cellular and constrained-network rules) for streams too.
        let session = URLSession(configuration: self.session.configuration, delegate: relay, delegateQueue: nil)
        let task = session.dataTask(with: request)
        let response = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (c: CheckedContinuation<HTTPURLResponse, Error>) in
                relay.start(task, responseContinuation: c)
            }
        } onCancel: { task.cancel() }
        relay.onTerminate { session.finishTasksAndInvalidate() }
        return (response, relay.chunks)
    }
}

/// Relays a delegate-driven data task into an `AsyncThrowingStream`: the
/// response head through a continuation, then each chunk as it arrives.
final class StreamRelay: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private let lock = NSLock()
    private var head: CheckedContinuation<HTTPURLResponse, Error>?
    private var task: URLSessionDataTask?
    private var terminate: (@Sendable () -> Void)?
    let chunks: AsyncThrowingStream<Data, Error>
    private let sink: AsyncThrowingStream<Data, Error>.Continuation

    override init() {
        (chunks, sink) = AsyncThrowingStream<Data, Error>.makeStream()
        super.init()
        sink.onTermination = { [weak self] _ in
            guard let self else { return }
            let (task, done) = self.lock.critical { (self.task, self.terminate) }
            task?.cancel()
            done?()
        }
    }

    func start(_ task: URLSessionDataTask, responseContinuation: CheckedContinuation<HTTPURLResponse, Error>) {
        lock.critical { self.head = responseContinuation; self.task = task }
        task.resume()
    }

    func onTerminate(_ body: @escaping @Sendable () -> Void) { lock.critical { terminate = body } }

    private func takeHead() -> CheckedContinuation<HTTPURLResponse, Error>? {
        lock.critical { defer { head = nil }; return head }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping (URLSession.ResponseDisposition) -> Void) {
        if let http = response as? HTTPURLResponse { takeHead()?.resume(returning: http) }
        else { takeHead()?.resume(throwing: RoostError.invalidResponse("not HTTP")) }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        sink.yield(data)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
        if let error {
            takeHead()?.resume(throwing: error)
            sink.finish(throwing: error)
        } else {
            takeHead()?.resume(throwing: RoostError.invalidResponse("no response"))
            sink.finish()
        }
        session.finishTasksAndInvalidate()
    }
}
