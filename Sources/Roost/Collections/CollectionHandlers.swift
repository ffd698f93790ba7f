import EventLoop
import HTTP
import Hooks
import JSON
import Jobs
import Store

/// The collections API: list, count, get, create, replace, patch, delete.
/// Each handler runs on the loop only long enough to check the request's
/// shape, then queues the work to a reader or the writer. Writes run through
/// the before hooks inside their savepoint; after hooks are queued after COMMIT.
struct CollectionHandlers: Sendable {
    let jobs: CallerJobs
    let maxBodyBytes: Int
    let hooks: HookServices

    var pools: StorePools { jobs.pools }
    var access: AccessPolicy { jobs.access }

    func list(_ collection: String, _ request: Request, _ out: ResponseWriter) {
        let html = ContentNegotiation.prefersHTML(request.headers["Accept"])
        let access = self.access
        jobs.read(request, out, in: collection) { reader, scope in
            do {
                return try Self.listPage(collection, request, html: html, access: access, reader: reader, scope: scope)
            } catch where html && Self.needsSignIn(error) {
                // A browser gets a page that says how to sign in, not its raw JSON 401.
                var response = Response.html(401, HTMLPages.signInHint(collection: collection))
                response.headers.add("WWW-Authenticate", "Bearer realm=\"roost\"")
                return response
            }
        }
    }

    /// Whether `error` is the 401 of an anonymous caller (not a bad token's).
    static func needsSignIn(_ error: any Error) -> Bool {
        if case .signInRequired? = error as? AccessScope.Denial { return true }
        if case .unauthorized? = error as? StoreError { return true }
        return false
    }

    static func listPage(_ collection: String, _ request: Request, html: Bool, access: AccessPolicy,
                         reader: any DocumentsReading, scope: AccessScope) throws -> Response {
            let find = try ListParameters.find(request)
            try access.checkHiddenFields(collection, scope.principal, filter: find.filter, sort: find.sort.map(\.field))
            if try ListParameters.wantsExplain(request) {
                guard scope.principal == .admin else { throw HTTPError(.forbidden, "explain=true is for administrators.") }
                return .json(200, try reader.explain(collection, find, scope: scope).jsonText)
            }
            let page = try reader.page(collection, find, withTotal: ListParameters.wantsTotal(request), scope: scope,
                                       redaction: access.redaction(collection, scope.principal))
            var documents = page.documents
            // A nearest-first list says how near: `_distance`, in metres.
            if let distances = page.distances, distances.count == documents.count {
                documents = zip(documents, distances).map { NearDistance.appended($1, to: $0) }
            } else if let near = NearDistance(find.filter) {
                documents = documents.map(near.annotate)
            }
            var truncated = false
            if let fields = try References.fields(request) {
                (documents, truncated) = try References.resolve(documents, fields: fields, as: scope, access: access, reader: reader)
            }
            var response: Response = html
                ? .html(200, HTMLPages.table(collection: collection, documents: documents, request: request, next: page.next))
                : .json(200, "[" + documents.joined(separator: ",") + "]")
            if let total = page.total { response.headers.add("X-Total-Count", String(total)) }
            if let next = page.next { response.headers.add("X-Roost-Next", next) }
            References.mark(&response, truncated: truncated)
            return response
    }

    func count(_ collection: String, _ request: Request, _ out: ResponseWriter) {
        let access = self.access
        jobs.read(request, out, in: collection) { reader, scope in
            let filter = try ListParameters.filter(request)
            try access.checkHiddenFields(collection, scope.principal, filter: filter, sort: [])
            let n = try reader.count(collection, filter: filter, scope: scope)
            return .json(200, "{\"count\":\(n)}")
        }
    }

    func get(_ collection: String, _ id: String, _ request: Request, _ out: ResponseWriter) {
        let access = self.access
        // One document, a few pages: short, unless it resolves references.
        jobs.read(request, out, in: collection, short: request.query["resolve"] == nil) { reader, scope in
            guard let text = try reader.get(collection, id: id, scope: scope, redaction: access.redaction(collection, scope.principal)) else {
                throw HTTPError.notFound("No document with _id \"\(id)\" in \(collection).")
            }
            if let fields = try References.fields(request) {
                let resolved = try References.resolve([text], fields: fields, as: scope, access: access, reader: reader)
                var response = Preconditions.entityResponse(200, resolved.documents[0], stored: text)
                References.mark(&response, truncated: resolved.truncated)
                return response
            }
            return Preconditions.entityResponse(200, text)
        }
    }

    func create(_ collection: String, _ request: Request, _ out: ResponseWriter) {
        guard let body = checkBody(request, out) else { return }
        submit(CollectionWrite(kind: .create, collection: collection, id: nil, request: request, body: body), out)
    }

    func replace(_ collection: String, _ id: String, _ request: Request, _ out: ResponseWriter) {
        guard let body = checkBody(request, out) else { return }
        submit(CollectionWrite(kind: .replace, collection: collection, id: id, request: request, body: body), out)
    }

    func patch(_ collection: String, _ id: String, _ request: Request, _ out: ResponseWriter) {
        guard let body = checkBody(request, out, extraTypes: ["application/merge-patch+json"]) else { return }
        submit(CollectionWrite(kind: .patch, collection: collection, id: id, request: request, body: body), out)
    }

    func delete(_ collection: String, _ id: String, _ request: Request, _ out: ResponseWriter) {
        submit(CollectionWrite(kind: .delete, collection: collection, id: id, request: request, body: nil), out)
    }

    /// One write: prepared on a reader, applied in the writer's group commit.
    private func submit(_ write: CollectionWrite, _ out: ResponseWriter) {
        let (access, hooks, pending) = (self.access, self.hooks, HookServices.Pending([]))
        // An anonymous write (no credentials: nothing to look up) with a small
        // body is checked here and parsed in the writer's job, saving the
        // reader hop; access is still settled before the body is parsed or a
        // writer slot is taken.
        if let caller = CallerJobs.callerWithoutLookup(write.request), (write.body?.count ?? 0) <= CollectionWrite.inlineBodyLimit {
            let scope = access.scope(caller, in: write.collection)
            do {
                try write.checkAccess(scope, access)
            } catch {
                return out.send(ErrorResponses.response(for: error, write.request, pools.logger))
            }
            return pools.write(write.request, out, committed: hooks.committed(pending)) { writer in
                try write.apply(try write.prepared(scope), hooks: hooks, access: access, writer: writer, pending: pending)
            }
        }
        jobs.write(write.request, out, committed: hooks.committed(pending), prepare: { caller in
            try write.prepare(caller, access)
        }) { writer, prepared in
            try write.apply(prepared, hooks: hooks, access: access, writer: writer, pending: pending)
        }
    }

    /// Checks size and media type on the loop (cheap); the body is parsed on the worker.
    func checkBody(_ request: Request, _ out: ResponseWriter, extraTypes: Set<String> = []) -> [UInt8]? {
        Self.checkBody(request, out, maxBodyBytes: maxBodyBytes, extraTypes: extraTypes)
    }

    /// A JSON body's size and media type, for any handler that takes one.
    static func checkBody(_ request: Request, _ out: ResponseWriter, maxBodyBytes: Int, extraTypes: Set<String> = []) -> [UInt8]? {
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
            out.send(HTTPError(.invalidJSON, "The request body is empty; send a JSON object.").response)
            return nil
        }
        return request.body
    }

    /// Parses a body that must be one JSON object.
    static func object(_ body: [UInt8]) throws -> JSONObject {
        let value: JSONValue
        do { value = try JSONParser.parse(body) } catch {
            throw HTTPError(.invalidJSON, "The request body is not valid JSON: \(error).")
        }
        guard case .object(let object) = value else {
            throw HTTPError(.invalidJSON, "The request body must be a JSON object, not \(value.typeName).")
        }
        return object
    }
}
