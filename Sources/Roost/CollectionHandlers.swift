import EventLoop
import HTTP
import JSON
import Store

/// The collections API: list, count, get, create, replace, patch, delete.
/// Each handler runs on the loop only long enough to check the request's
/// shape, then queues the work to a reader or the writer.
struct CollectionHandlers: Sendable {
    let pools: StorePools
    let maxBodyBytes: Int
    let access: AccessPolicy

    func list(_ collection: String, _ request: Request, _ out: ResponseWriter) {
        let html = ContentNegotiation.prefersHTML(request.headers["Accept"])
        let access = self.access
        pools.read(request, out) { reader in
            let scope = try access.scope(request, collection, reader)
            let find = try ListParameters.find(request)
            try access.checkHiddenFields(collection, scope.principal, filter: find.filter, sort: find.sort.map(\.field))
            let documents = try reader.find(collection, find, scope: scope, redaction: access.redaction(collection, scope.principal))
            var response: Response = html
                ? .html(200, HTMLPages.table(collection: collection, documents: documents))
                : .json(200, "[" + documents.joined(separator: ",") + "]")
            if ListParameters.wantsTotal(request) {
                response.headers.add("X-Total-Count", String(try reader.count(collection, filter: find.filter, scope: scope)))
            }
            return response
        }
    }

    func count(_ collection: String, _ request: Request, _ out: ResponseWriter) {
        let access = self.access
        pools.read(request, out) { reader in
            let scope = try access.scope(request, collection, reader)
            let filter = try ListParameters.filter(request)
            try access.checkHiddenFields(collection, scope.principal, filter: filter, sort: [])
            let n = try reader.count(collection, filter: filter, scope: scope)
            return .json(200, "{\"count\":\(n)}")
        }
    }

    func get(_ collection: String, _ id: String, _ request: Request, _ out: ResponseWriter) {
        let access = self.access
        pools.read(request, out) { reader in
            let scope = try access.scope(request, collection, reader)
            guard let text = try reader.get(collection, id: id, scope: scope, redaction: access.redaction(collection, scope.principal)) else {
                throw HTTPError.notFound("No document with _id \"\(id)\" in \(collection).")
            }
            return .json(200, text)
        }
    }

    func create(_ collection: String, _ request: Request, _ out: ResponseWriter) {
        guard let body = checkBody(request, out) else { return }
        let access = self.access
        pools.write(request, out) { writer in
            let scope = try access.scope(request, collection, writer)
            return .json(201, try writer.insert(into: collection, try Self.object(body), scope: scope))
        }
    }

    func replace(_ collection: String, _ id: String, _ request: Request, _ out: ResponseWriter) {
        guard let body = checkBody(request, out) else { return }
        let access = self.access
        pools.write(request, out) { writer in
            let scope = try access.scope(request, collection, writer)
            let (created, text) = try writer.replace(in: collection, id: id, try Self.object(body), scope: scope)
            return .json(created ? 201 : 200, text)
        }
    }

    func patch(_ collection: String, _ id: String, _ request: Request, _ out: ResponseWriter) {
        guard let body = checkBody(request, out, extraTypes: ["application/merge-patch+json"]) else { return }
        let access = self.access
        pools.write(request, out) { writer in
            let scope = try access.scope(request, collection, writer)
            return .json(200, try writer.patch(in: collection, id: id, try Self.object(body), scope: scope))
        }
    }

    func delete(_ collection: String, _ id: String, _ request: Request, _ out: ResponseWriter) {
        let access = self.access
        pools.write(request, out) { writer in
            try writer.delete(from: collection, id: id, scope: try access.scope(request, collection, writer))
            return .json(200, "{\"count\":1}")
        }
    }

    /// Checks size and media type on the loop (cheap); the body is parsed on the worker.
    func checkBody(_ request: Request, _ out: ResponseWriter, extraTypes: Set<String> = []) -> [UInt8]? {
        if request.body.count > maxBodyBytes {
            out.send(HTTPError.tooLarge(limit: maxBodyBytes).response)
            return nil
        }
        if let type = ContentNegotiation.mediaType(request.headers["Content-Type"]),
           type != "application/json", !extraTypes.contains(type) {
            out.send(HTTPError.unsupportedMediaType("Send the document as application/json (got \(type)).").response)
            return nil
        }
        if request.body.isEmpty {
            out.send(HTTPError(400, "InvalidJSON", "The request body is empty; send a JSON object.").response)
            return nil
        }
        return request.body
    }

    /// Parses a body that must be one JSON object.
    static func object(_ body: [UInt8]) throws -> JSONObject {
        let value: JSONValue
        do { value = try JSONParser.parse(body) } catch {
            throw HTTPError(400, "InvalidJSON", "The request body is not valid JSON: \(error).")
        }
        guard case .object(let object) = value else {
            throw HTTPError(400, "InvalidJSON", "The request body must be a JSON object, not \(value.typeName).")
        }
        return object
    }
}
