import Files
import Foundation
import HTTP
import Logging

/// libvips as the daemon sees it: loaded at the first image, not at
/// start-up. When it cannot be loaded, image uploads and thumbnails answer
/// 503 and the reason is logged once, at error level; everything else,
/// other files included, keeps working.
final class ImageLibrary: @unchecked Sendable {
    private let logger: Logger
    private let lock = NSLock()
    // Guarded by `lock`.
    private var reported = false

    init(logger: Logger) {
        self.logger = logger
    }

    /// True once a load has failed (and was reported); never loads libvips.
    var failed: Bool {
        lock.lock()
        defer { lock.unlock() }
        return reported
    }

    /// Logs why libvips cannot be loaded, the first time only.
    func reportUnavailable(_ reason: String) {
        lock.lock()
        let first = !reported
        reported = true
        lock.unlock()
        guard first else { return }
        logger.error("libvips cannot be loaded: image uploads and thumbnails answer 503 until roostd restarts with it installed",
                     metadata: ["library": "\(Vips.libraryName)", "error": "\(reason)"])
    }

    /// Logs why `Vips.start` failed, the first time only.
    func reportLoadFailure() {
        do { try Vips.start() } catch { reportUnavailable(error.description) }
    }

    /// The answer to a request that needs libvips when it cannot be loaded.
    func unavailable(_ failure: Vips.Unavailable) -> HTTPError {
        reportUnavailable(failure.description)
        return HTTPError(.imageProcessingUnavailable,
                         "Images cannot be processed on this server: \(failure.description).")
    }
}
