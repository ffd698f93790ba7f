import Foundation
import JSON
import Store

/// Firebase Cloud Messaging, HTTP v1: a service account's RS256 JWT is
/// exchanged for an OAuth2 access token (the jwt-bearer grant) at its
/// `token_uri`; the token is kept until a minute before it expires (or a
/// 401); pushes are `POST /v1/projects/{id}/messages:send`. Used by one thread.
public final class FCMProvider {
    /// The fields of a service-account JSON file roostd uses.
    public struct ServiceAccount: Sendable {
        public let projectID: String
        public let clientEmail: String
        public let privateKey: String
        public let tokenURI: String

        /// Reads a service-account JSON (`type: service_account`).
        public init(json text: String) throws {
            guard case .object(let o)? = try? JSONParser.parse(text), o["type"]?.stringValue == "service_account",
                  let project = o["project_id"]?.stringValue, let email = o["client_email"]?.stringValue,
                  let key = o["private_key"]?.stringValue else {
                throw PushError("the FCM service account is not a service-account JSON (type, project_id, client_email, private_key)")
            }
            projectID = project
            clientEmail = email
            privateKey = key
            tokenURI = o["token_uri"]?.stringValue ?? "https://oauth2.googleapis.com/token"
        }
    }

    public struct Settings: Sendable, Equatable {
        public var endpoint = "https://fcm.googleapis.com"
        /// Overrides the service account's `token_uri` (tests).
        public var tokenURL: String?
        public init() {}
    }

    static let scope = "https://www.googleapis.com/auth/firebase.messaging"

    let account: ServiceAccount
    let settings: Settings
    let signer: JWTSigner
    private var access: (token: String, expiresAt: Date)?
    /// Access tokens fetched so far.
    public private(set) var tokensFetched = 0

    public init(account: ServiceAccount, settings: Settings) throws {
        self.account = account
        self.settings = settings
        do { signer = try JWTSigner(pem: account.privateKey, algorithm: .rs256) } catch {
            throw PushError("the FCM service account's private_key cannot be used: \(error)")
        }
    }

    var tokenURL: String { settings.tokenURL ?? account.tokenURI }

    /// A valid access token: the cached one, or a new one from the token endpoint.
    func accessToken(_ client: HTTP2Client, timeoutMilliseconds: Int) throws -> String {
        if let access, access.expiresAt.timeIntervalSinceNow > 60 { return access.token }
        let now = Int64(Date().timeIntervalSince1970)
        var claims = JSONObject()
        claims["iss"] = .string(account.clientEmail)
        claims["scope"] = .string(Self.scope)
        claims["aud"] = .string(tokenURL)
        claims["iat"] = .int(now)
        claims["exp"] = .int(now + 3600)
        let assertion = try signer.token(claims: claims)
        let form = "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=" + assertion
        let response = client.perform([HTTP2Request(url: tokenURL, headers: [("content-type", "application/x-www-form-urlencoded")],
                                                    body: Array(form.utf8))], timeoutMilliseconds: timeoutMilliseconds)[0]
        guard let status = response.status else { throw PushError("FCM token endpoint: \(response.error ?? "no response")") }
        guard status == 200, case .object(let o)? = try? JSONParser.parse(response.body), let token = o["access_token"]?.stringValue else {
            throw PushError("FCM token endpoint answered HTTP \(status)")
        }
        var lifetime = 3600.0
        if case .int(let s)? = o["expires_in"] { lifetime = Double(s) }
        access = (token, Date().addingTimeInterval(lifetime))
        tokensFetched += 1
        return token
    }

    /// Forgets the access token (after a 401).
    func expireToken() { access = nil }

    func request(_ push: DuePush, _ notification: PushNotification, accessToken: String) -> HTTP2Request {
        HTTP2Request(url: settings.endpoint + "/v1/projects/" + account.projectID + "/messages:send",
                     headers: [("authorization", "Bearer " + accessToken), ("content-type", "application/json")],
                     body: notification.fcmBody(token: push.token, collapseKey: push.collapseID))
    }

    /// What FCM's answer means: `UNREGISTERED` (or a 404 whose JSON error says
    /// `NOT_FOUND`) removes the device; a bare 404 (a wrong endpoint or
    /// project) does not; INVALID_ARGUMENT only when the error names the token.
    static func verdict(_ response: HTTP2Response) -> ProviderVerdict {
        guard let status = response.status else { return .retry(retryAfter: nil, reason: response.error ?? "no response") }
        if status == 200 { return .delivered }
        let error = (try? JSONParser.parse(response.body))?.objectValue?["error"]?.objectValue
        let state = error?["status"]?.stringValue ?? "HTTP \(status)"
        let message = error?["message"]?.stringValue ?? ""
        let details = error?["details"]?.arrayValue ?? []
        let codes = details.compactMap { $0.objectValue?["errorCode"]?.stringValue }
        let fields = details.flatMap { ($0.objectValue?["fieldViolations"]?.arrayValue ?? []).compactMap { $0.objectValue?["field"]?.stringValue } }
        if codes.contains("UNREGISTERED") || (status == 404 && error?["status"]?.stringValue == "NOT_FOUND") {
            return .removeDevice(reason: "FCM \(status) \(codes.first ?? state)", ifSeenBefore: nil)
        }
        switch status {
        case 400:
            let namesToken = fields.contains("message.token") || message.lowercased().contains("registration token")
            return namesToken ? .removeDevice(reason: "FCM 400 INVALID_ARGUMENT (token)", ifSeenBefore: nil)
                              : .dead(reason: "FCM 400 \(codes.first ?? state)")
        case 401:
            return .refreshCredential(reason: "FCM 401 \(state)")
        case 429, 500..<600:
            return .retry(retryAfter: response.retryAfter, reason: "FCM \(status) \(codes.first ?? state)")
        default:
            return .dead(reason: "FCM \(status) \(codes.first ?? state)")
        }
    }
}
