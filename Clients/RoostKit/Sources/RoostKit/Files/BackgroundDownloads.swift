import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

#if canImport(Darwin) && !os(Linux)
/// Fetches a ``FileDownloadQueue``'s files through a background `URLSession`
/// (Apple platforms): the system goes on while the app is suspended or
/// terminated. Each task carries its item's id in `taskDescription`. A
/// task cut short leaves resume data, kept next to the item and used for
/// the next attempt; the finished file is moved into the cache at once
/// (the system deletes it when the delegate call returns).
///
/// NOT compiled or run on Linux (the only toolchain this was written with):
/// it uses only documented `URLSession` background APIs. The same queue's
/// foreground path (Range + If-Range onto a partial file) is what the tests run.
final class BackgroundDownloads: NSObject, URLSessionDownloadDelegate, @unchecked Sendable {
    private let lock = NSLock()
    private var session: URLSession!
    private weak var queue: FileDownloadQueue?
    private var failures: [Int: RoostError] = [:]

    static func make(identifier: String?) -> BackgroundDownloads? {
        guard let identifier else { return nil }
        return BackgroundDownloads(identifier: identifier)
    }

    private init(identifier: String) {
        super.init()
        let configuration = URLSessionConfiguration.background(withIdentifier: identifier)
        configuration.sessionSendsLaunchEvents = true
        configuration.isDiscretionary = false
        session = URLSession(configuration: configuration, delegate: self, delegateQueue: nil)
    }

    /// Takes the queue, and queues again the items a previous launch left
    /// `downloading` that the session no longer runs.
    func attach(_ queue: FileDownloadQueue) {
        lock.critical { self.queue = queue }
        session.getAllTasks { [weak queue] tasks in
            guard let queue else { return }
            let running = Set(tasks.compactMap(\.taskDescription))
            for var item in queue.items where item.state == .downloading && !running.contains(item.id) {
                item.state = .queued
                try? queue.save(item)
            }
            queue.sendInBackground()
        }
    }

    /// Hands `item` to the background session, from its resume data when it has some.
    func send(_ item: FileDownloadQueue.Item, for queue: FileDownloadQueue) -> Bool {
        var fetching = item
        fetching.state = .downloading
        try? queue.save(fetching)
        let task: URLSessionDownloadTask
        if let resume = try? Data(contentsOf: queue.resumeDataURL(item.id)) {
            try? FileManager.default.removeItem(at: queue.resumeDataURL(item.id))
            task = session.downloadTask(withResumeData: resume)
        } else {
            try? FileManager.default.removeItem(at: queue.partialURL(item.id))  // the whole file: no Range
            task = session.downloadTask(with: queue.request(for: item))
        }
        task.taskDescription = item.id
        task.resume()
        return true
    }

    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didWriteData bytesWritten: Int64,
                    totalBytesWritten: Int64, totalBytesExpectedToWrite: Int64) {
        guard let id = downloadTask.taskDescription else { return }
        queue?.emit(.progress(id, TransferProgress(completed: totalBytesWritten, total: totalBytesExpectedToWrite)))
    }

    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL) {
        guard let queue, let id = downloadTask.taskDescription, let response = downloadTask.response as? HTTPURLResponse else { return }
        guard response.statusCode < 400 else {
            let body = (try? Data(contentsOf: location)) ?? Data()
            lock.critical { failures[downloadTask.taskIdentifier] = .server(ServerError(response: response, body: body)) }
            return
        }
        try? FileManager.default.removeItem(at: queue.partialURL(id))
        do { try FileManager.default.moveItem(at: location, to: queue.partialURL(id)) } catch {
            lock.critical { failures[downloadTask.taskIdentifier] = .localStore("cannot keep \(id): \(error)") }
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
        let failure = lock.critical { failures.removeValue(forKey: task.taskIdentifier) }
        guard let queue, let id = task.taskDescription, var item = queue.item(id) else { return }
        if let error {
            if let resume = (error as NSError).userInfo[NSURLSessionDownloadTaskResumeData] as? Data {
                try? resume.write(to: queue.resumeDataURL(id), options: .atomic)
            }
            _ = queue.fail(&item, RoostError.from(transport: error))
        } else if let failure {
            _ = queue.fail(&item, failure)
        } else {
            _ = queue.finish(&item)
        }
    }

    func urlSessionDidFinishEvents(forBackgroundURLSession session: URLSession) {
        guard let identifier = session.configuration.identifier,
              let completion = BackgroundUploads.takeCompletion(for: identifier) else { return }
        DispatchQueue.main.async { completion() }
    }
}
#else
/// No background `URLSession` here: the queue fetches in the foreground.
final class BackgroundDownloads: Sendable {
    static func make(identifier: String?) -> BackgroundDownloads? { nil }
    func attach(_ queue: FileDownloadQueue) {}
    func send(_ item: FileDownloadQueue.Item, for queue: FileDownloadQueue) -> Bool { false }
}
#endif

extension FileDownloadQueue {
    /// Call from `application(_:handleEventsForBackgroundURLSession:completionHandler:)`
    /// after making the queue with the same `backgroundSessionIdentifier`.
    public static func handleBackgroundEvents(identifier: String, completion: @escaping @Sendable () -> Void) {
        FileUploadQueue.handleBackgroundEvents(identifier: identifier, completion: completion)
    }
}
