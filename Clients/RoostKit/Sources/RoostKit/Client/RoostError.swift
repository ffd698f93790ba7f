import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Everything RoostKit throws.
///
/// A server refusal arrives as ``server(_:)`` carrying the server's error code
/// (``ServerError/Code``). A request that got no answer keeps the system's
/// `URLError` (``network(_:)``), so "offline" (``isOffline``: try again
/// later) stays apart from what retrying cannot fix, such as App Transport
/// Security refusing an `http://` URL or a TLS failure. A cancelled task is
/// ``cancelled``. It is a `LocalizedError`: `localizedDescription` is a
/// sentence to show.
///
/// ```swift
/// do { try await session.logIn(username: "alice", password: "wrong") }
/// catch RoostError.server(let e) where e.code == .invalidCredentials { … }
/// catch let e as RoostError where e.isOffline { … }
/// ```
public enum RoostError: Error, Sendable, Equatable, CustomStringConvertible, LocalizedError {
    /// The server answered with an error status and body.
    case server(ServerError)
    /// The request got no answer, with the system's error: offline, the host
    /// unreachable, a timeout, a dropped connection (``isOffline``), or a
    /// refusal before sending (App Transport Security, TLS, a bad URL).
    case network(URLError)
    /// No answer, from a transport that threw something other than a `URLError`.
    case unreachable(String)
    /// The calling task was cancelled.
    case cancelled
    /// The answer was not what the API promises (status, JSON shape, types).
    case invalidResponse(String)
    /// The call needs a session and there is none: log in first.
    case notSignedIn
    /// The local SQLite store failed.
    case localStore(String)
    /// The password (or ID token, or reset code) was right and the account has
    /// two-factor on: no session yet. Ask for a code and call
    /// ``RoostClient/verifyTwoFactor(ticket:code:)`` with the challenge's ticket.
    case twoFactorRequired(TwoFactorChallenge)

    /// The server's error code, when the server answered.
    public var code: ServerError.Code? { if case .server(let e) = self { return e.code }; return nil }

    /// The HTTP status, when the server answered.
    public var status: Int? { if case .server(let e) = self { return e.status }; return nil }

    /// The `URLError` the system gave, when the request got no answer.
    public var urlError: URLError? { if case .network(let e) = self { return e }; return nil }

    /// No answer because there is no usable network path right now: trying
    /// again later (on reconnect, in the next sync) can succeed.
    public var isOffline: Bool {
        switch self {
        case .unreachable: return true
        case .network(let e): return Self.offlineCodes.contains(e.code)
        default: return false
        }
    }

    static let offlineCodes: Set<URLError.Code> = [
        .notConnectedToInternet, .networkConnectionLost, .cannotConnectToHost, .cannotFindHost, .timedOut,
        .dnsLookupFailed, .internationalRoamingOff, .callIsActive, .dataNotAllowed, .cannotLoadFromNetwork,
    ]

    /// Maps whatever a transport threw: RoostKit's own errors as they are,
    /// `URLError` kept (cancellation apart), anything else as ``unreachable(_:)``.
    static func from(transport error: Error) -> RoostError {
        switch error {
        case let e as RoostError: return e
        case is CancellationError: return .cancelled
        case let e as URLError: return e.code == .cancelled ? .cancelled : .network(e)
        default: return .unreachable(String(describing: error))
        }
    }

    public var description: String {
        switch self {
        case .server(let e): return "\(e.status) \(e.code.rawValue): \(e.message)"
        case .network(let e): return "network: \(Self.sentence(for: e))"
        case .unreachable(let m): return "unreachable: \(m)"
        case .cancelled: return "cancelled"
        case .invalidResponse(let m): return "invalid response: \(m)"
        case .notSignedIn: return "not signed in"
        case .localStore(let m): return "local store: \(m)"
        case .twoFactorRequired: return "two-factor code required"
        }
    }

    public var errorDescription: String? {
        switch self {
        case .server(let e): return e.message
        case .network(let e): return Self.sentence(for: e)
        case .unreachable: return "The server could not be reached."
        case .cancelled: return "The request was cancelled."
        case .invalidResponse: return "The server's answer could not be read."
        case .notSignedIn: return "You are not signed in."
        case .localStore(let m): return "The local store failed: \(m)"
        case .twoFactorRequired: return "Enter the code from your authenticator app."
        }
    }

    public var recoverySuggestion: String? {
        if isOffline { return "Check the connection; changes made meanwhile are kept and sent later." }
        switch self {
        case .network(let e) where e.code == .appTransportSecurityRequiresSecureConnection:
            return "Use an https:// server URL, or add an App Transport Security exception for this host."
        case .server(let e) where e.code == .invalidToken || e.code == .unauthorized:
            return "Sign in again."
        case .notSignedIn:
            return "Sign in again."
        case .server(let e) where e.retryAfter != nil:
            return "Try again in \(e.retryAfter!) seconds."
        default: return nil
        }
    }

    private static func sentence(for error: URLError) -> String {
        switch error.code {
        case .appTransportSecurityRequiresSecureConnection:
            return "App Transport Security refused a plain http:// connection (URLError \(error.code.rawValue))."
        case .notConnectedToInternet: return "The device is offline."
        case .timedOut: return "The server did not answer in time."
        case .cannotConnectToHost, .cannotFindHost, .dnsLookupFailed: return "The server could not be reached."
        case .networkConnectionLost: return "The connection was lost."
        case .serverCertificateUntrusted, .serverCertificateHasBadDate, .serverCertificateNotYetValid,
             .serverCertificateHasUnknownRoot, .secureConnectionFailed, .clientCertificateRejected, .clientCertificateRequired:
            return "The secure connection to the server failed (URLError \(error.code.rawValue))."
        default: return "The request failed (URLError \(error.code.rawValue))."
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
        case invalidJSON, invalidDocument, invalidQuery, unsupportedOperator, schemaViolation
        case invalidCollectionName, reservedCollectionName, badRequest, emptyBody, invalidMultipart
        case unauthorized, invalidToken, invalidCredentials, forbidden, accessRuleDenied
        case notFound, methodNotAllowed, conflict, gone, cursorExpired, preconditionFailed
        case payloadTooLarge, unsupportedMediaType, rangeNotSatisfiable, invalidImage, imageTooLarge
        case tooManyAttempts, rateLimited, tooManyStreams, internalError, hookFailed, hookTimeout, scriptError
        case overloaded, queryTimeout, shuttingDown
        /// Accounts: a wrong, expired or used code or link token (verify, reset, email change, two-factor).
        case invalidCode
        /// Accounts: the provider's ID token was refused (signature, issuer, audience, expiry, nonce, replay).
        case invalidIDToken
        /// Accounts: the password is right but the address is not verified yet (while `unverified_login` is false).
        case emailNotVerified
        /// Accounts: a sensitive change needs a current two-factor code (`twoFactorCode`).
        case twoFactorRequired
        /// Accounts: the address belongs to another account.
        case emailTaken
        /// A field that cannot change (such as `username`).
        case immutableField
        /// A delete refused because declared references point at the record.
        case referenced
        /// A code this version of RoostKit does not know, as sent.
        case unknown(String)

        /// Every known code with its wire name.
        static let all: [Code] = [
            .invalidJSON, .invalidDocument, .invalidQuery, .unsupportedOperator, .invalidCollectionName,
            .reservedCollectionName, .badRequest, .emptyBody, .invalidMultipart, .unauthorized, .invalidToken,
            .invalidCredentials, .forbidden, .notFound, .methodNotAllowed, .conflict, .gone, .cursorExpired,
            .preconditionFailed, .payloadTooLarge, .unsupportedMediaType, .rangeNotSatisfiable, .invalidImage,
            .imageTooLarge, .tooManyAttempts, .internalError, .hookFailed, .hookTimeout, .overloaded, .queryTimeout,
            .shuttingDown, .schemaViolation, .accessRuleDenied, .rateLimited, .tooManyStreams, .scriptError,
            .invalidCode, .invalidIDToken, .emailNotVerified, .twoFactorRequired, .emailTaken, .immutableField, .referenced,
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
            case .schemaViolation: return "SchemaViolation"
            case .accessRuleDenied: return "AccessRuleDenied"
            case .rateLimited: return "RateLimited"
            case .tooManyStreams: return "TooManyStreams"
            case .scriptError: return "ScriptError"
            case .invalidCode: return "InvalidCode"
            case .invalidIDToken: return "InvalidIDToken"
            case .emailNotVerified: return "EmailNotVerified"
            case .twoFactorRequired: return "TwoFactorRequired"
            case .emailTaken: return "EmailTaken"
            case .immutableField: return "ImmutableField"
            case .referenced: return "Referenced"
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
