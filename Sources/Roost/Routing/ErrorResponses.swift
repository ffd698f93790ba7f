import Daemon
import Files
import HTTP
import Hooks
import Logging
import Store

/// Turns whatever a handler, a job or a hook threw into what the client sees.
/// The one place errors become HTTP: each error type knows its `HTTPError`
/// (`HTTPErrorConvertible`); anything else is wrapped as a `StoreError`.
enum ErrorResponses {
    /// The client's error for `error`, logging the failures that are ours
    /// (database and file-store errors), not the client's.
    static func httpError(for error: any Error, _ request: Request, _ logger: Logger) -> HTTPError {
        if let known = error as? any HTTPErrorConvertible, !(known is StoreError) {
            if let failure = error as? DurableFile.Failure {
                logger.error("file store error", metadata: ["request_id": "\(request.requestID)", "error": "\(failure)"])
            }
            return known.httpError
        }
        let storeError = StoreError.wrap(error)
        let answer = storeError.httpError
        if case .database(let db) = storeError {
            // Ours (500) at error level; the database short of memory, disk or a
            // limit at warning (an operator must see a full disk); what a client's
            // request caused (a regex or query past its limits, a timeout, a busy
            // writer) at debug, so no client can fill the error log.
            let level: Logger.Level = answer.status == 500 ? .error : (db.isOutOfResources ? .warning : .debug)
            logger.log(level: level, "database error",
                       metadata: ["request_id": "\(request.requestID)", "path": "\(LogFormat.escaped(request.path))", "error": "\(db)", "status": "\(answer.status)"])
        }
        return answer
    }

    /// The response for `error`.
    static func response(for error: any Error, _ request: Request, _ logger: Logger) -> Response {
        httpError(for: error, request, logger).response
    }

    /// `body`'s response, or its error's.
    static func catching(_ request: Request, _ logger: Logger, _ body: () throws -> Response) -> Response {
        do { return try body() } catch { return response(for: error, request, logger) }
    }
}

extension UploadError: HTTPErrorConvertible {
    public var httpError: HTTPError { HTTPError(code, description) }
}

extension HookRefusal: HTTPErrorConvertible {
    /// A hook's refusal keeps the status, code and headers the hook chose.
    public var httpError: HTTPError { HTTPError(status: status, code: code, message, headers: headers) }
}

extension DurableFile.Failure: HTTPErrorConvertible {
    public var httpError: HTTPError { .internalError("The file could not be stored; nothing was kept.") }
}
