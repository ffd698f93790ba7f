import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Everything RoostKit throws.
///
/// A server refusal arrives as ``server(_:)`` carrying the server's error code
/// (``ServerError/Code``); a request that never got an answer is
/// ``unreachable(_:)``, which the offline store treats as "try again later".
///
/// ```swift
/// do { try await session.logIn(username: "alice", password: "wrong") }
/// catch RoostError.server(let e) where e.code == .invalidCredentials { … }
/// ```
public enum RoostError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The server answered with an error status and body.
    case server(ServerError)
    /// No answer: offline, connection refused or dropped, timed out.
    case unreachable(String)
    /// The answer was not what the API promises (status, JSON shape, types).
    case invalidResponse(String)
    /// The call needs a session and there is none: log in first.
    case notSignedIn
    /// The local SQLite store failed.
    case localStore(String)

    /// The server's error code, when the server answered.
    public var code: ServerError.Code? { if case .server(let e) = self { return e.code }; return nil }

    public var description: String {
        switch self {
        case .server(let e): return "\(e.status) \(e.code.rawValue): \(e.message)"
        case .unreachable(let m): return "unreachable: \(m)"
        case .invalidResponse(let m): return "invalid response: \(m)"
        case .notSignedIn: return "not signed in"
        case .localStore(let m): return "local store: \(m)"
        }
    }
}

/// A refusal from the server: `{"error": "<Code>", "description": "<sentence>"}`.
public struct ServerError: Sendable, Equatable {
    /// The HTTP status.
    public let status: Int
    /// The error code.
    public let code: Code
    /// The server's sentence about it.
    public let message: String
    /// Seconds to wait before retrying (`Retry-After`), for 429 and 503.
    public let retryAfter: Int?
    /// The entity's current `ETag`, sent with 412 `PreconditionFailed`.
    public let etag: String?
    /// For a refused batch (``RoostClient/batch(_:)``): the index of the operation that failed.
    public let operation: Int?

    public init(status: Int, code: Code, message: String, retryAfter: Int? = nil, etag: String? = nil, operation: Int? = nil) {
        self.status = status
        self.code = code
        self.message = message
        self.retryAfter = retryAfter
        self.etag = etag
        self.operation = operation
    }

    /// The server's error codes, with ``unknown(_:)`` for codes this version does not know.
    public enum Code: Sendable, Hashable, RawRepresentable {
        case invalidJSON, invalidDocument, invalidQuery, unsupportedOperator
        case invalidCollectionName, reservedCollectionName, badRequest, emptyBody, invalidMultipart
        case unauthorized, invalidToken, invalidCredentials, forbidden
        case notFound, methodNotAllowed, conflict, gone, cursorExpired, preconditionFailed
        case payloadTooLarge, unsupportedMediaType, rangeNotSatisfiable, invalidImage, imageTooLarge
        case tooManyAttempts, internalError, hookFailed, hookTimeout
        case overloaded, queryTimeout, shuttingDown
        /// A code this version of RoostKit does not know, as sent.
        case unknown(String)

        /// Every known code with its wire name.
        static let all: [Code] = [
            .invalidJSON, .invalidDocument, .invalidQuery, .unsupportedOperator, .invalidCollectionName,
            .reservedCollectionName, .badRequest, .emptyBody, .invalidMultipart, .unauthorized, .invalidToken,
            .invalidCredentials, .forbidden, .notFound, .methodNotAllowed, .conflict, .gone, .cursorExpired,
            .preconditionFailed, .payloadTooLarge, .unsupportedMediaType, .rangeNotSatisfiable, .invalidImage,
            .imageTooLarge, .tooManyAttempts, .internalError, .hookFailed, .hookTimeout, .overloaded, .queryTimeout,
            .shuttingDown,
        ]
        private static let byName: [String: Code] = Dictionary(uniqueKeysWithValues: all.map { ($0.rawValue, $0) })

        public init(rawValue: String) { self = Self.byName[rawValue] ?? .unknown(rawValue) }

        // A switch, not a table: RawRepresentable's == and hash go through rawValue.
        public var rawValue: String {
            switch self {
            case .invalidJSON: return "InvalidJSON"
            case .invalidDocument: return "InvalidDocument"
            case .invalidQuery: return "InvalidQuery"
            case .unsupportedOperator: return "UnsupportedOperator"
            case .invalidCollectionName: return "InvalidCollectionName"
            case .reservedCollectionName: return "ReservedCollectionName"
            case .badRequest: return "BadRequest"
            case .emptyBody: return "EmptyBody"
            case .invalidMultipart: return "InvalidMultipart"
            case .unauthorized: return "Unauthorized"
            case .invalidToken: return "InvalidToken"
            case .invalidCredentials: return "InvalidCredentials"
            case .forbidden: return "Forbidden"
            case .notFound: return "NotFound"
            case .methodNotAllowed: return "MethodNotAllowed"
            case .conflict: return "Conflict"
            case .gone: return "Gone"
            case .cursorExpired: return "CursorExpired"
            case .preconditionFailed: return "PreconditionFailed"
            case .payloadTooLarge: return "PayloadTooLarge"
            case .unsupportedMediaType: return "UnsupportedMediaType"
            case .rangeNotSatisfiable: return "RangeNotSatisfiable"
            case .invalidImage: return "InvalidImage"
            case .imageTooLarge: return "ImageTooLarge"
            case .tooManyAttempts: return "TooManyAttempts"
            case .internalError: return "InternalError"
            case .hookFailed: return "HookFailed"
            case .hookTimeout: return "HookTimeout"
            case .overloaded: return "Overloaded"
            case .queryTimeout: return "QueryTimeout"
            case .shuttingDown: return "ShuttingDown"
            case .unknown(let s): return s
            }
        }

        /// The code a bare status implies when the body has none.
        static func fallback(status: Int) -> Code {
            switch status {
            case 400: return .badRequest
            case 401: return .unauthorized
            case 403: return .forbidden
            case 404: return .notFound
            case 405: return .methodNotAllowed
            case 409: return .conflict
            case 410: return .gone
            case 412: return .preconditionFailed
            case 413: return .payloadTooLarge
            case 415: return .unsupportedMediaType
            case 429: return .tooManyAttempts
            case 503: return .overloaded
            default: return .unknown("HTTP \(status)")
            }
        }
    }
}

extension ServerError {
    /// Reads a Roost error body and its headers.
    init(response: HTTPURLResponse, body: Data) {
        let object = (try? JSONValue.parse(body))?.objectValue
        let code = object?["error"]?.stringValue.map(Code.init(rawValue:)) ?? Code.fallback(status: response.statusCode)
        self.init(status: response.statusCode, code: code,
                  message: object?["description"]?.stringValue ?? HTTPURLResponse.localizedString(forStatusCode: response.statusCode),
                  retryAfter: response.value(forHTTPHeaderField: "Retry-After").flatMap { Int($0) },
                  etag: response.value(forHTTPHeaderField: "ETag"),
                  operation: object?["operation"]?.doubleValue.map { Int($0) })
    }
}
