import EventLoop
import HTTP

extension AccountHandlers {
    /// The `/auth/…` routes (email codes, ID tokens, guests, two-factor), declared once here.
    var authRoutes: [RoostRoute] {
        let accounts = self
        return [
            RoostRoute("/auth/verify-email/request", [.post: { r, out in accounts.requestCode(r, out, purpose: .verifyEmail) }]),
            RoostRoute("/auth/verify-email", [.post: { r, out in accounts.verifyEmail(r, out) },
                                              .get: { r, out in accounts.linkPage(r, out, purpose: .verifyEmail) }]),
            RoostRoute("/auth/password-reset/request", [.post: { r, out in accounts.requestCode(r, out, purpose: .passwordReset) }]),
            RoostRoute("/auth/password-reset", [.post: { r, out in accounts.resetPassword(r, out) },
                                                .get: { r, out in accounts.resetPage(r, out) }]),
            RoostRoute("/auth/email-change/request", [.post: { r, out in accounts.requestEmailChange(r, out) }]),
            RoostRoute("/auth/email-change", [.post: { r, out in accounts.confirmEmailChange(r, out) },
                                              .get: { r, out in accounts.linkPage(r, out, purpose: .emailChange) }]),
            RoostRoute("/auth/idtoken", [.post: { r, out in accounts.idTokenSignIn(r, out) }]),
            RoostRoute("/auth/idtoken/link", [.post: { r, out in accounts.linkIdentity(r, out) }]),
            RoostRoute("/auth/idtoken/link/:provider", [.delete: { r, out in accounts.unlinkIdentity(r.segments[3], r, out) }]),
            RoostRoute("/auth/anonymous", [.post: { r, out in accounts.anonymousSignUp(r, out) }]),
            RoostRoute("/auth/anonymous/upgrade", [.post: { r, out in accounts.upgradeAnonymous(r, out) }]),
            RoostRoute("/auth/2fa/setup", [.post: { r, out in accounts.twoFactorSetup(r, out) }]),
            RoostRoute("/auth/2fa/enable", [.post: { r, out in accounts.twoFactorEnable(r, out) }]),
            RoostRoute("/auth/2fa/disable", [.post: { r, out in accounts.twoFactorDisable(r, out) }]),
            RoostRoute("/auth/2fa/verify", [.post: { r, out in accounts.twoFactorVerify(r, out) }]),
            RoostRoute("/auth/account", [.get: { r, out in accounts.accountSecurity(r, out) }]),
            RoostRoute("/auth/*", anyMethod: Router.noEndpoint),
        ]
    }
}
