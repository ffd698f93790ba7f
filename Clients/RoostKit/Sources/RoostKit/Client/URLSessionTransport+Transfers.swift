import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// How far a transfer is: bytes done of `total` (-1 while unknown).
public struct TransferProgress: Sendable, Hashable {
    /// Bytes sent (upload) or received (download) so far.
    public let completed: Int64
    /// The whole size, or -1 when the server did not say (a download without `Content-Length`).
    public let total: Int64
    /// From 0 to 1, when the total is known.
    public var fraction: Double? { total > 0 ? min(1, Double(completed) / Double(total)) : nil }

    public init(completed: Int64, total: Int64) {
        self.completed = completed
        self.total = total
    }
}

extension URLSessionTransport {
    /// An upload task streaming `file`, on a session with the transport's
    /// configuration and a delegate for progress.
    public func upload(_ request: URLRequest, fromFile file: URL,
                       progress: @escaping @Sendable (TransferProgress) -> Void) async throws -> (Data, HTTPURLResponse) {
        let relay = TransferRelay(progress: progress, destination: nil)
        let session = URLSession(configuration: self.session.configuration, delegate: relay, delegateQueue: nil)
        defer { session.finishTasksAndInvalidate() }
        var request = request
        request.httpBody = nil  // the body is the file
        let task = session.uploadTask(with: request, fromFile: file)
        return try await relay.run(task)
    }

    /// A data task whose 2xx body goes to `destination` chunk by chunk.
    public func download(_ request: URLRequest, to destination: URL,
                         progress: @escaping @Sendable (TransferProgress) -> Void) async throws -> (Data, HTTPURLResponse) {
        let relay = TransferRelay(progress: progress, destination: destination)
        let session = URLSession(configuration: self.session.configuration, delegate: relay, delegateQueue: nil)
        defer { session.finishTasksAndInvalidate() }
        return try await relay.run(session.dataTask(with: request))
    }
}

/// The delegate of one transfer: reports progress, keeps the answer's body
/// (or writes a 2xx download's body to its destination), and resumes the
/// caller when the task completes.
final class TransferRelay: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private let lock = NSLock()
    private let progress: @Sendable (TransferProgress) -> Void
    private let destination: URL?
    private var body = Data()
    private var file: FileHandle?
    private var received: Int64 = 0
    private var expected: Int64 = -1
    private var fileError: Error?
    private var done: CheckedContinuation<(Data, HTTPURLResponse), Error>?

    init(progress: @escaping @Sendable (TransferProgress) -> Void, destination: URL?) {
        self.progress = progress
        self.destination = destination
    }

    func run(_ task: URLSessionTask) async throws -> (Data, HTTPURLResponse) {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (c: CheckedContinuation<(Data, HTTPURLResponse), Error>) in
                lock.critical { done = c }
                task.resume()
            }
        } onCancel: { task.cancel() }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64,
                    totalBytesSent: Int64, totalBytesExpectedToSend: Int64) {
        progress(TransferProgress(completed: totalBytesSent, total: totalBytesExpectedToSend))
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping (URLSession.ResponseDisposition) -> Void) {
        if let http = response as? HTTPURLResponse, (200..<300).contains(http.statusCode), let destination {
            lock.critical {
                expected = http.expectedContentLength
                do {
                    // A 206 continues what the destination holds; anything else starts it afresh.
                    if http.statusCode == 206, let existing = try? FileHandle(forWritingTo: destination) {
                        received = Int64(try existing.seekToEnd())
                        if expected >= 0 { expected += received }
                        file = existing
                    } else {
                        _ = FileManager.default.createFile(atPath: destination.path, contents: nil)
                        file = try FileHandle(forWritingTo: destination)
                    }
                } catch { fileError = error }
            }
        }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let report: TransferProgress? = lock.critical {
            guard let file else { body.append(data); return nil }
            do { try file.write(contentsOf: data) } catch { fileError = error }
            received += Int64(data.count)
            return TransferProgress(completed: received, total: expected)
        }
        if let report { progress(report) }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
        let (continuation, data, failure): (CheckedContinuation<(Data, HTTPURLResponse), Error>?, Data, Error?) = lock.critical {
            try? file?.close()
            file = nil
            defer { done = nil }
            return (done, body, error ?? fileError)
        }
        if let failure { continuation?.resume(throwing: failure); return }
        guard let http = task.response as? HTTPURLResponse else {
            continuation?.resume(throwing: RoostError.invalidResponse("not HTTP"))
            return
        }
        continuation?.resume(returning: (data, http))
    }
}
