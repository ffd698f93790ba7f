import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

#if canImport(Darwin) && !os(Linux)
/// Sends a ``FileUploadQueue``'s files through a background `URLSession`
/// (Apple platforms): the system goes on uploading while the app is
/// suspended or terminated, and relaunches it in the background with the
/// answers. Each task carries its item's id in `taskDescription`; answers
/// are matched to items by it, in this launch or a later one.
///
/// NOT compiled or run on Linux (the only toolchain this was written with):
/// it uses only documented `URLSession` background APIs.
final class BackgroundUploads: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private let lock = NSLock()
    private var session: URLSession!
    private weak var queue: FileUploadQueue?
    private var bodies: [Int: Data] = [:]
    private static let completions = Locked<[String: @Sendable () -> Void]>([:])

    static func make(identifier: String?) -> BackgroundUploads? {
        guard let identifier else { return nil }
        return BackgroundUploads(identifier: identifier)
    }

    private init(identifier: String) {
        super.init()
        let configuration = URLSessionConfiguration.background(withIdentifier: identifier)
        configuration.sessionSendsLaunchEvents = true
        configuration.isDiscretionary = false
        session = URLSession(configuration: configuration, delegate: self, delegateQueue: nil)
    }

    /// Takes the queue, and puts back in it the items a previous launch left
    /// `uploading` that the session no longer runs (their answer may be lost:
    /// they are looked up before being sent again).
    func attach(_ queue: FileUploadQueue) {
        lock.critical { self.queue = queue }
        session.getAllTasks { [weak queue] tasks in
            guard let queue else { return }
            let running = Set(tasks.compactMap(\.taskDescription))
            for var item in queue.items where item.state == .uploading && !running.contains(item.id) {
                item.state = .queued
                item.uncertain = true
                try? queue.save(item)
            }
            queue.sendInBackground()
        }
    }

    /// Hands `item` to the background session (true), unless a task for it is already running there.
    func send(_ item: FileUploadQueue.Item, for queue: FileUploadQueue) -> Bool {
        var request = queue.client.request("POST", ["files"], body: Data(), contentType: item.contentType)
        request.httpBody = nil
        var sending = item
        sending.state = .uploading
        sending.uncertain = true
        try? queue.save(sending)
        let task = session.uploadTask(with: request, fromFile: queue.bytesURL(item.id))
        task.taskDescription = item.id
        task.resume()
        return true
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64,
                    totalBytesSent: Int64, totalBytesExpectedToSend: Int64) {
        guard let id = task.taskDescription else { return }
        queue?.emit(.progress(id, TransferProgress(completed: totalBytesSent, total: totalBytesExpectedToSend)))
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        lock.critical { bodies[dataTask.taskIdentifier, default: Data()].append(data) }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
        let body = lock.critical { bodies.removeValue(forKey: task.taskIdentifier) } ?? Data()
        guard let queue, let id = task.taskDescription, var item = queue.item(id) else { return }
        if let error {
            _ = queue.fail(&item, RoostError.from(transport: error))
            return
        }
        guard let response = task.response as? HTTPURLResponse else { return }
        guard response.statusCode < 400 else {
            _ = queue.fail(&item, .server(ServerError(response: response, body: body)))
            return
        }
        if let meta = try? JSONDecoder.roost.decode(FileMeta.self, from: body) {
            queue.finish(&item, meta)
        } else {
            _ = queue.fail(&item, .invalidResponse("FileMeta from a background upload"))
        }
    }

    func urlSessionDidFinishEvents(forBackgroundURLSession session: URLSession) {
        guard let identifier = session.configuration.identifier,
              let completion = Self.completions.update({ $0.removeValue(forKey: identifier) }) else { return }
        DispatchQueue.main.async { completion() }
    }

    static func keep(_ completion: @escaping @Sendable () -> Void, for identifier: String) {
        completions.update { $0[identifier] = completion }
    }

    /// The completion kept for a session (uploads' or downloads'), taken once.
    static func takeCompletion(for identifier: String) -> (@Sendable () -> Void)? {
        completions.update { $0.removeValue(forKey: identifier) }
    }
}
#else
/// No background `URLSession` here: the queue sends in the foreground.
final class BackgroundUploads: Sendable {
    static func make(identifier: String?) -> BackgroundUploads? { nil }
    func attach(_ queue: FileUploadQueue) {}
    func send(_ item: FileUploadQueue.Item, for queue: FileUploadQueue) -> Bool { false }
    static func keep(_ completion: @escaping @Sendable () -> Void, for identifier: String) { completion() }
}
#endif

extension FileUploadQueue {
    /// Call from `application(_:handleEventsForBackgroundURLSession:completionHandler:)`
    /// after making the queue with the same `backgroundSessionIdentifier`: the
    /// completion runs once the session has delivered its answers.
    public static func handleBackgroundEvents(identifier: String, completion: @escaping @Sendable () -> Void) {
        BackgroundUploads.keep(completion, for: identifier)
    }
}
