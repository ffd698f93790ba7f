import EventLoop
import HTTP
import JSON
import Logging

/// First run without an admin credential (`AdminCredential`):
///
/// - `GET /admin/setup`: `{"adminCredential": bool, "setupPending": bool}`, for
///   the console's sign-in page to say plainly whether an admin credential exists;
/// - `POST /admin/setup` `{"code": …}`: the one-time code of the console link
///   printed at start-up; 201 `{"token": …}` once (the new admin credential),
///   403 `SetupCodeRefused` for a wrong code, 409 when a credential exists,
///   410 when the code was used, expired or voided.
struct AdminSetupHandlers: Sendable {
    let admin: AdminCredential
    let pools: StorePools
    let logger: Logger

    /// A code is 43 characters; anything much longer is not one.
    static let maxBody = 1024
    /// The longest `code` read (openapi.yaml's maxLength): even written as `\u` escapes it fits in `maxBody`.
    static let maxCode = 64

    var routes: [RoostRoute] {
        let handlers = self
        return [RoostRoute("/admin/setup", [.get: { r, out in handlers.status(r, out) }, .post: { r, out in handlers.complete(r, out) }])]
    }

    func status(_ request: Request, _ out: ResponseWriter) {
        var o = JSONObject()
        o["adminCredential"] = .bool(admin.exists)
        o["setupPending"] = .bool(admin.setupPending)
        var response = Response.json(200, o.jsonText)
        response.headers.add("Cache-Control", "no-store")
        out.send(response)
    }

    func complete(_ request: Request, _ out: ResponseWriter) {
        guard request.body.count <= Self.maxBody else { return out.send(HTTPError.tooLarge(limit: Self.maxBody).response) }
        let (admin, logger) = (self.admin, self.logger)
        // On a hash thread: the credential's file is written and fsynced off the loop.
        pools.hashing(request, out, lane: .credentials) {
            let fields = try CollectionHandlers.object(request.body)
            // Only `code`, and no longer than a code can be: anything else is not a guess (and is not counted as one).
            guard fields.count == 1, case .string(let code)? = fields["code"], (1...Self.maxCode).contains(code.unicodeScalars.count) else {
                throw HTTPError(.invalidDocument, "Send {\"code\": …} alone: the code of the console link roostd printed at start-up.")
            }
            switch try admin.completeSetup(code: code, logger: logger) {
            case .created(let token):
                var o = JSONObject()
                o["token"] = .string(token)
                var response = Response.json(201, o.jsonText)
                response.headers.add("Cache-Control", "no-store")
                return response
            case .alreadyExists:
                throw HTTPError(.adminCredentialExists, "An admin credential already exists; sign in with it.")
            case .noCode:
                throw HTTPError(.setupCodeExpired,
                                "This setup link was used, expired or voided; restart roostd to print a new one (or set admin_token).")
            case .wrongCode(let left):
                throw HTTPError(.setupCodeRefused, left > 0
                                ? "That setup code is wrong; \(left) attempts left before it is voided."
                                : "That setup code is wrong and is now voided; restart roostd to print a new link.")
            }
        }
    }
}
