/// Every error code Roost answers, with its one status: the `error` member of
/// an error body. Declared once here; `openapi.yaml`'s `Error` schema lists
/// exactly these (`Tests/RoostTests/ErrorCodeSpecTests.swift` checks both
/// directions), and the Python tests' list is checked against the spec.
///
/// Built-in hooks refuse with these (`HookRefusal(.forbidden, …)`). Codes a
/// script chooses (`ctx.refuse`) may be the app's own and are not listed
/// (`HookRefusal(status:appCode:_:)`); a script naming one of these must use
/// its status (`HookRefusal.appCodeProblem`).
public enum ErrorCode: String, CaseIterable, Sendable {
    // 400: the request itself is wrong.
    case badRequest = "BadRequest"
    case invalidJSON = "InvalidJSON"
    case invalidDocument = "InvalidDocument"
    case schemaViolation = "SchemaViolation"
    case invalidSettings = "InvalidSettings"
    case invalidQuery = "InvalidQuery"
    case unsupportedOperator = "UnsupportedOperator"
    case regexTooComplex = "RegexTooComplex"
    case invalidCollectionName = "InvalidCollectionName"
    case reservedCollectionName = "ReservedCollectionName"
    case invalidCursor = "InvalidCursor"
    case emptyBody = "EmptyBody"
    case invalidMultipart = "InvalidMultipart"
    case invalidCode = "InvalidCode"
    // 401 and 403: who is asking.
    case unauthorized = "Unauthorized"
    case invalidToken = "InvalidToken"
    case invalidCredentials = "InvalidCredentials"
    case invalidIDToken = "InvalidIDToken"
    case forbidden = "Forbidden"
    case accessRuleDenied = "AccessRuleDenied"
    case originNotAllowed = "OriginNotAllowed"
    case setupCodeRefused = "SetupCodeRefused"
    case emailNotVerified = "EmailNotVerified"
    case twoFactorRequired = "TwoFactorRequired"
    case invalidSignature = "InvalidSignature"
    case signedURLExpired = "SignedURLExpired"
    // 404 to 416: the resource and its state.
    case notFound = "NotFound"
    case methodNotAllowed = "MethodNotAllowed"
    case conflict = "Conflict"
    case managedByConfig = "ManagedByConfig"
    case immutableField = "ImmutableField"
    case referenced = "Referenced"
    case cascadeTooLarge = "CascadeTooLarge"
    case backupRunning = "BackupRunning"
    case backupsNotConfigured = "BackupsNotConfigured"
    case backupsNotForThisDatabase = "BackupsNotForThisDatabase"
    case cursorExpired = "CursorExpired"
    case setupCodeExpired = "SetupCodeExpired"
    case adminCredentialExists = "AdminCredentialExists"
    case emailTaken = "EmailTaken"
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
    case hookFailed = "HookFailed"
    case scriptError = "ScriptError"
    case overloaded = "Overloaded"
    case queryTimeout = "QueryTimeout"
    case databaseBusy = "DatabaseBusy"
    case storageUnavailable = "StorageUnavailable"
    case shuttingDown = "ShuttingDown"
    case imageProcessingUnavailable = "ImageProcessingUnavailable"
    case hookTimeout = "HookTimeout"
    case hookDepth = "HookDepth"

    /// The status every answer with this code has.
    public var status: Int {
        switch self {
        case .badRequest, .invalidJSON, .invalidDocument, .schemaViolation, .invalidSettings, .invalidQuery, .unsupportedOperator, .regexTooComplex,
             .invalidCollectionName, .reservedCollectionName, .invalidCursor, .emptyBody, .invalidMultipart, .invalidCode: return 400
        case .unauthorized, .invalidToken, .invalidCredentials, .invalidIDToken: return 401
        case .forbidden, .accessRuleDenied, .originNotAllowed, .setupCodeRefused, .emailNotVerified, .twoFactorRequired, .invalidSignature,
             .signedURLExpired: return 403
        case .notFound: return 404
        case .methodNotAllowed: return 405
        case .conflict, .managedByConfig, .immutableField, .referenced, .cascadeTooLarge, .backupRunning, .backupsNotConfigured,
             .backupsNotForThisDatabase, .adminCredentialExists, .emailTaken: return 409
        case .cursorExpired, .setupCodeExpired: return 410
        case .preconditionFailed: return 412
        case .payloadTooLarge: return 413
        case .unsupportedMediaType: return 415
        case .rangeNotSatisfiable: return 416
        case .invalidImage, .imageTooLarge: return 422
        case .tooManyAttempts, .tooManyStreams, .rateLimited: return 429
        case .requestHeaderFieldsTooLarge: return 431
        case .internalError, .backupFailed, .hookFailed, .scriptError: return 500
        case .overloaded, .queryTimeout, .databaseBusy, .storageUnavailable, .shuttingDown, .imageProcessingUnavailable, .hookTimeout: return 503
        case .hookDepth: return 508
        }
    }
}
