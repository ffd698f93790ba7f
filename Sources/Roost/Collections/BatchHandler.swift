import Foundation
import EventLoop
import HTTP
import Hooks
import JSON
import Jobs
import Logging
import Store

/// `POST /_batch`: up to 100 collection writes applied all-or-nothing in one
/// transaction of the writer's group commit. Each operation is the same
/// `CollectionWrite` a single request makes, so it is checked with exactly
/// the rights, preconditions and hooks it would have alone.
///
/// Body: `{"operations": [{"method", "path", "body", "headers"}]}` where
/// `path` is `/:collection` (POST) or `/:collection/:id` (PUT, PATCH,
/// DELETE) and `headers` may carry `If-Match` / `If-None-Match`. The batch's
/// own `Authorization` applies to every operation: its caller is found once.
struct BatchHandler: Sendable {
    let collections: CollectionHandlers
    let logger: Logger
    static let maxOperations = 100

    /// The failure of one operation, which undoes the whole batch.
    struct Failure: HTTPErrorConvertible {
        let index: Int
        let inner: HTTPError

        var httpError: HTTPError {
            var fields = JSONObject()
            fields["operation"] = .int(Int64(index))
            return HTTPError(status: inner.status, code: inner.code, "Operation \(index) failed, so nothing in the batch was applied: \(inner.description)",
                             headers: inner.headers, fields: fields)
        }
    }

    func handle(_ request: Request, _ out: ResponseWriter) {
        guard let body = collections.checkBody(request, out) else { return }
        let (access, hooks, logger) = (collections.access, collections.hooks, self.logger)
        let pending = HookServices.Pending([])
        collections.jobs.write(request, out, committed: hooks.committed(pending), prepare: { caller in
            let writes = try Self.operations(body, request)
            return try writes.enumerated().map { index, write in
                do { return (write, try write.prepare(caller, access)) } catch {
                    throw Failure(index: index, inner: ErrorResponses.httpError(for: error, request, logger))
                }
            }
        }) { writer, prepared in
            var answer = BatchAnswer()
            /// A refused held create is its own operation's failure, reported before any later one's.
            func settle(before index: Int) throws {
                do { try writer.settleHeldWrite() } catch let refused as HeldWriteFailure {
                    guard refused.part < index else { return }  // the failing operation's own create: its error says it
                    throw Failure(index: refused.part, inner: ErrorResponses.httpError(for: refused.error, request, logger))
                }
            }
            for (index, (write, step)) in prepared.enumerated() {
                let response: Response
                // PostgreSQL holds the operations' creates and sends them as one statement
                // (at the end, or before the next statement that must see them).
                writer.holdWrites(part: index)
                do {
                    response = try write.apply(step, hooks: hooks, access: access, writer: writer, pending: pending)
                } catch {
                    try settle(before: index)
                    throw Failure(index: index, inner: ErrorResponses.httpError(for: error, request, logger))
                }
                answer.add(response, entity: write.entityKey(step))
            }
            try settle(before: prepared.count)
            return .json(200, answer.jsonText)
        }
    }

    /// The batch's operations as collection writes, checked for shape.
    static func operations(_ body: [UInt8], _ request: Request) throws -> [CollectionWrite] {
        let object = try CollectionHandlers.object(body)
        guard case .array(let list)? = object["operations"], !list.isEmpty, list.count <= maxOperations else {
            throw HTTPError(.invalidDocument, "Send {\"operations\": [...]} with 1 to \(maxOperations) operations.")
        }
        return try list.enumerated().map { index, value in
            do { return try operation(value, index: index, request) } catch let e as HTTPError {
                throw Failure(index: index, inner: e)
            }
        }
    }

    static func operation(_ value: JSONValue, index: Int, _ batch: Request) throws -> CollectionWrite {
        guard case .object(let op) = value, case .string(let methodName)? = op["method"], case .string(let path)? = op["path"] else {
            throw HTTPError(.invalidDocument, "Each operation needs a method and a path.")
        }
        // Exactly `/collection` or `/collection/id`: no empty segment, and only the id is percent-decoded.
        // Split on bytes: as Characters, a "/" followed by a combining mark (or an emoji modifier) is no "/".
        let raw = path.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
        let segments = raw.count >= 2 && raw[0].isEmpty && !raw.dropFirst().contains("")
            ? [raw[1]] + raw.dropFirst(2).map { $0.removingPercentEncoding ?? $0 } : []
        guard let collection = segments.first, !CollectionName.isReserved(collection), CollectionName.isWellFormed(collection),
              segments.count <= 2, !(segments.count == 2 && segments[1].hasPrefix("_")) else {
            throw HTTPError(.invalidDocument, "A batch holds writes to collections: /:collection or /:collection/:id (not \(path)).")
        }
        let kind: CollectionWrite.Kind
        switch (methodName, segments.count) {
        case ("POST", 1): kind = .create
        case ("PUT", 2): kind = .replace
        case ("PATCH", 2): kind = .patch
        case ("DELETE", 2): kind = .delete
        default: throw HTTPError(.invalidDocument, "A batch operation is POST /:collection, or PUT, PATCH or DELETE /:collection/:id.")
        }
        var entity: JSONObject?
        switch (kind, op["body"]) {
        case (.delete, _): entity = nil
        case (_, .object(let o)?): entity = o
        default: throw HTTPError(.invalidDocument, "A \(methodName) operation needs a JSON object body.")
        }
        var headers = Headers()  // the batch's caller is found once, by the job seam, for every operation
        if let given = op["headers"], given.objectValue == nil {
            throw HTTPError(.invalidDocument, "An operation's headers must be an object such as {\"If-Match\": \"...\"}.")
        }
        if case .object(let given)? = op["headers"] {
            for (name, value) in given {
                guard ["if-match", "if-none-match"].contains(name.lowercased()), case .string(let v) = value else {
                    throw HTTPError(.invalidDocument, "An operation's headers may be If-Match and If-None-Match (strings).")
                }
                headers.add(name, v)
            }
        }
        let sub = Request(method: Request.Method(rawValue: methodName) ?? .other, path: path, segments: segments,
                          query: [:], headers: headers, body: [], requestID: "\(batch.requestID)/\(index)",
                          remoteAddress: batch.remoteAddress)
        return CollectionWrite(kind: kind, collection: collection, id: segments.count == 2 ? segments[1] : nil,
                               request: sub, body: nil, entity: entity ?? (kind == .delete ? nil : JSONObject()))
    }
}
