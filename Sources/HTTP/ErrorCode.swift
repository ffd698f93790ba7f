/// Every error code Roost answers, with its one status: the `error` member of
/// an error body. Declared once here; `openapi.yaml`'s `Error` schema lists
/// exactly these (`Tests/RoostTests/ErrorCodeSpecTests.swift` checks both
/// directions), and the Python tests' list is checked against the spec.
///
/// Codes a hook or script chooses (`ctx.refuse`) are the app's own and are
/// not listed; they use `HTTPError(status:code:_:)`.
public enum ErrorCode: String, CaseIterable, Sendable {
    // 400: the request itself is wrong.
    case badRequest = "BadRequest"
    case invalidJSON = "InvalidJSON"
    case invalidDocument = "InvalidDocument"
    case invalidQuery = "InvalidQuery"
    case unsupportedOperator = "UnsupportedOperator"
    case regexTooComplex = "RegexTooComplex"
    case invalidCollectionName = "InvalidCollectionName"
    case reservedCollectionName = "ReservedCollectionName"
    case invalidCursor = "InvalidCursor"
    case emptyBody = "EmptyBody"
    case invalidMultipart = "InvalidMultipart"
    // 401 and 403: who is asking.
    case unauthorized = "Unauthorized"
    case invalidToken = "InvalidToken"
    case invalidCredentials = "InvalidCredentials"
    case forbidden = "Forbidden"
    // 404 to 416: the resource and its state.
    case notFound = "NotFound"
    case methodNotAllowed = "MethodNotAllowed"
    case conflict = "Conflict"
    case immutableField = "ImmutableField"
    case referenced = "Referenced"
    case cascadeTooLarge = "CascadeTooLarge"
    case backupRunning = "BackupRunning"
    case backupsNotConfigured = "BackupsNotConfigured"
    case backupsNotForThisDatabase = "BackupsNotForThisDatabase"
    case cursorExpired = "CursorExpired"
    case preconditionFailed = "PreconditionFailed"
    case payloadTooLarge = "PayloadTooLarge"
    case unsupportedMediaType = "UnsupportedMediaType"
    case rangeNotSatisfiable = "RangeNotSatisfiable"
    case invalidImage = "InvalidImage"
    case imageTooLarge = "ImageTooLarge"
    // 429 and 431: too much, too often.
    case tooManyAttempts = "TooManyAttempts"
    case tooManyStreams = "TooManyStreams"
    case rateLimited = "RateLimited"
    case requestHeaderFieldsTooLarge = "RequestHeaderFieldsTooLarge"
    // 5xx: the server's side.
    case internalError = "InternalError"
    case backupFailed = "BackupFailed"
    case overloaded = "Overloaded"
    case queryTimeout = "QueryTimeout"
    case databaseBusy = "DatabaseBusy"
    case storageUnavailable = "StorageUnavailable"
    case shuttingDown = "ShuttingDown"
    case imageProcessingUnavailable = "ImageProcessingUnavailable"

    /// The status every answer with this code has.
    public var status: Int {
        switch self {
        case .badRequest, .invalidJSON, .invalidDocument, .invalidQuery, .unsupportedOperator, .regexTooComplex,
             .invalidCollectionName, .reservedCollectionName, .invalidCursor, .emptyBody, .invalidMultipart: return 400
        case .unauthorized, .invalidToken, .invalidCredentials: return 401
        case .forbidden: return 403
        case .notFound: return 404
        case .methodNotAllowed: return 405
        case .conflict, .immutableField, .referenced, .cascadeTooLarge, .backupRunning, .backupsNotConfigured,
             .backupsNotForThisDatabase: return 409
        case .cursorExpired: return 410
        case .preconditionFailed: return 412
        case .payloadTooLarge: return 413
        case .unsupportedMediaType: return 415
        case .rangeNotSatisfiable: return 416
        case .invalidImage, .imageTooLarge: return 422
        case .tooManyAttempts, .tooManyStreams, .rateLimited: return 429
        case .requestHeaderFieldsTooLarge: return 431
        case .internalError, .backupFailed: return 500
        case .overloaded, .queryTimeout, .databaseBusy, .storageUnavailable, .shuttingDown, .imageProcessingUnavailable: return 503
        }
    }
}
