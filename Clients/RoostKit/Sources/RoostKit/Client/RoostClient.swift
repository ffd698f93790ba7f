import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A connection to one Roost server: the session, typed collections, files,
/// push devices and live events all start here.
///
/// The client keeps the session token in its ``TokenStore`` and sends it as
/// `Authorization: Bearer` on every request. It is safe to share between tasks.
///
/// - Parameters:
///   - baseURL: the server, such as `http://127.0.0.1:8080`.
///   - tokenStore: where the session survives app launches.
///   - transport: the network (``URLSessionTransport`` unless a test injects one).
///
/// ```swift
/// let roost = RoostClient(baseURL: URL(string: "http://127.0.0.1:8080")!,
///                         tokenStore: FileTokenStore(url: appSupport.appendingPathComponent("session.json")))
/// try await roost.logIn(username: "alice", password: "correct horse")
/// let parks = try await roost.collection("locations", of: Location.self)
///     .find(Query(Field("categories").isIn(["Park"])).limit(10))
/// ```
public final class RoostClient: Sendable {
    /// The server's address.
    public let baseURL: URL
    /// The network seam.
    public let transport: HTTPTransport
    /// Where the session is kept.
    public let tokenStore: TokenStore
    let state: Locked<RoostSession?>
    let sessionWatchers = Locked<[UUID: AsyncStream<SessionState>.Continuation]>([:])
    let reconnectHandlers = Locked<[UUID: @Sendable () -> Void]>([:])

    /// A client of the server at `baseURL`, restoring any session `tokenStore` holds.
    public init(baseURL: URL, tokenStore: TokenStore = MemoryTokenStore(), transport: HTTPTransport = URLSessionTransport()) {
        self.baseURL = baseURL
        self.tokenStore = tokenStore
        self.transport = transport
        self.state = Locked((try? tokenStore.load()) ?? nil)
    }

    /// The signed-in session, if any (restored from the token store at start).
    public var session: RoostSession? { state.value }

    /// The signed-in user's id, if any.
    public var userID: String? { state.value?.user.id }

    /// A typed collection of `Model` documents.
    public func collection<Model: Codable & Sendable>(_ name: String, of type: Model.Type = Model.self) -> RoostCollection<Model> {
        RoostCollection(client: self, name: name)
    }

    /// The file store.
    public var files: RoostFiles { RoostFiles(client: self) }

    // MARK: - Requests

    /// One answer from the server.
    struct Reply: Sendable {
        let data: Data
        let response: HTTPURLResponse
        var status: Int { response.statusCode }
        func header(_ name: String) -> String? { response.value(forHTTPHeaderField: name) }

        func decode<T: Decodable>(_ type: T.Type = T.self) throws -> T {
            do { return try JSONDecoder.roost.decode(T.self, from: data) } catch {
                throw RoostError.invalidResponse("\(T.self) from \(String(decoding: data.prefix(200), as: UTF8.self)): \(error)")
            }
        }
    }

    /// Builds the URL of `path` (segments are percent-encoded one by one) with `query`.
    func url(_ path: [String], query: [(String, String)] = []) -> URL {
        var text = baseURL.absoluteString
        while text.hasSuffix("/") { text.removeLast() }
        for segment in path { text += "/" + Self.escape(segment, allowed: .urlPathAllowed) }
        if !query.isEmpty {
            text += "?" + query.map { Self.escape($0.0, allowed: .urlQueryAllowed) + "=" + Self.escape($0.1, allowed: .urlQueryAllowed) }
                .joined(separator: "&")
        }
        return URL(string: text)!
    }

    /// One path segment, percent-encoded as ``url(_:query:)`` does.
    static func escapeSegment(_ text: String) -> String { escape(text, allowed: .urlPathAllowed) }

    private static func escape(_ text: String, allowed: CharacterSet) -> String {
        var set = allowed
        set.remove(charactersIn: "/?#&=+;")
        return text.addingPercentEncoding(withAllowedCharacters: set) ?? text
    }

    /// A request with the session's bearer token.
    func request(_ method: String, _ path: [String], query: [(String, String)] = [], headers: [String: String] = [:],
                 body: Data? = nil, contentType: String? = "application/json") -> URLRequest {
        var r = URLRequest(url: url(path, query: query))
        r.httpMethod = method
        r.setValue("application/json", forHTTPHeaderField: "Accept")
        if let token = state.value?.token { r.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        if let body {
            r.httpBody = body
            if let contentType { r.setValue(contentType, forHTTPHeaderField: "Content-Type") }
        }
        for (k, v) in headers { r.setValue(v, forHTTPHeaderField: k) }
        return r
    }

    /// Sends a request and returns any answer, error statuses included.
    func raw(_ request: URLRequest) async throws -> Reply {
        let reply: Reply
        do {
            let (data, response) = try await transport.send(request)
            reply = Reply(data: data, response: response)
        } catch {
            throw RoostError.from(transport: error)
        }
        if reply.status == 401 { noteUnauthorized(request, reply.response, reply.data) }
        return reply
    }

    /// Sends a request; a status of 400 or more throws ``RoostError/server(_:)``.
    @discardableResult
    func call(_ method: String, _ path: [String], query: [(String, String)] = [], headers: [String: String] = [:],
              body: Data? = nil, contentType: String? = "application/json") async throws -> Reply {
        let reply = try await raw(request(method, path, query: query, headers: headers, body: body, contentType: contentType))
        guard reply.status < 400 else { throw RoostError.server(ServerError(response: reply.response, body: reply.data)) }
        return reply
    }

    /// Encodes a body as JSON.
    static func body<T: Encodable>(_ value: T) throws -> Data {
        do { return try JSONEncoder.roost.encode(value) } catch { throw RoostError.invalidResponse("cannot encode \(T.self): \(error)") }
    }
}

/// A value behind a lock, for the few pieces of shared mutable state.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value
    init(_ value: Value) { stored = value }
    var value: Value { lock.critical { stored } }
    func set(_ value: Value) { lock.critical { stored = value } }
    @discardableResult func update<R>(_ body: (inout Value) -> R) -> R { lock.critical { body(&stored) } }
}
