import Foundation
import Testing
@testable import RoostKit

/// RoostKit's account calls against a real roostd that mails to a
/// ``MailCatcher``: email sign-up, verification, reset, email change,
/// guests, two-factor and provider ID tokens.
extension AgainstRoostd {
    @Suite("Accounts by email, guests, two-factor, ID tokens") struct EmailAccounts {
        /// A daemon that mails to `mail`; `unverifiedLogin` as `unverified_login`;
        /// the `company` provider is `issuer` when given.
        static func fixture(_ mail: MailCatcher, unverifiedLogin: Bool = false, guests: Bool = true,
                            issuer: OIDCIssuer? = nil) throws -> Fixture {
            let issuerURL = issuer?.url ?? "https://login.example.org"
            let jwks = issuer.map { "\($0.url)/jwks" } ?? "http://127.0.0.1:9/keys"
            return try Fixture(config: Fixture.config + """

                signup_requires: either
                unverified_login: \(unverifiedLogin)
                anonymous_accounts: \(guests)
                smtp_url: smtp://127.0.0.1:\(mail.port)
                smtp_tls: off
                smtp_from: roost@example.org
                oidc_providers:
                  company:
                    issuer: \(issuerURL)
                    jwks_url: \(jwks)
                    client_ids: [com.example.app]
                """)
        }

        static func address(_ name: String) -> String { "\(name)-\(UUID().uuidString.prefix(8).lowercased())@example.org" }

        @Test("email sign-up needs verification; the mailed code verifies; log-in by email in any case")
        func signUpAndVerify() async throws {
            let mail = try MailCatcher()
            let fx = try Self.fixture(mail)
            let email = Self.address("ada")
            let app = fx.client()
            let outcome = try await app.signUp(email: email, password: "analytical-engine", profile: ["firstName": JSONValue.string("Ada")])
            #expect(outcome == .verificationRequired)
            #expect(app.session == nil)

            let unverified = await #expect(throws: RoostError.self) { try await app.logIn(email: email, password: "analytical-engine") }
            #expect(unverified?.code == .emailNotVerified)

            // A taken address gets the same answer (its owner is mailed instead): no enumeration.
            #expect(try await fx.client().signUp(email: email, password: "someone-else-entirely") == .verificationRequired)

            let code = try #require(try await mail.waitForMail(to: email).code)
            let wrong = code == "000000" ? "111111" : "000000"
            let refused = await #expect(throws: RoostError.self) { try await app.verifyEmail(email: email, code: wrong) }
            #expect(refused?.code == .invalidCode)
            try await app.verifyEmail(email: email, code: code)
            // Single use.
            let reused = await #expect(throws: RoostError.self) { try await app.verifyEmail(email: email, code: code) }
            #expect(reused?.code == .invalidCode)

            let session = try await app.logIn(email: email.uppercased(), password: "analytical-engine")
            #expect(session.user.fields["email"] == .string(email))
            #expect(session.user.fields["firstName"] == "Ada")
            let security = try await app.accountSecurity()
            #expect(security.emailVerified && security.hasPassword && !security.twoFactor && !security.anonymous)
            #expect(security.email == email)

            // A new code on request, for an address not verified yet.
            let other = Self.address("bob")
            #expect(try await fx.client().signUp(email: other, password: "difference-engine") == .verificationRequired)
            _ = try await mail.waitForMail(to: other)
            try await fx.client().requestVerification(email: other)
            let second = try await mail.waitForMail(to: other, after: 1)
            try await fx.client().verifyEmail(email: other, code: try #require(second.code))
            try await fx.client().logIn(email: other, password: "difference-engine")
        }

        @Test("with unverified_login, an email sign-up is signed in at once and a taken address is a conflict")
        func signUpSignedIn() async throws {
            let mail = try MailCatcher()
            let fx = try Self.fixture(mail, unverifiedLogin: true)
            let email = Self.address("grace")
            let app = fx.client()
            guard case .signedIn(let session) = try await app.signUp(email: email, password: "compiler-pioneer") else {
                Issue.record("expected a session"); return
            }
            #expect(app.userID == session.user.id)
            #expect(try await app.accountSecurity().emailVerified == false)
            let taken = await #expect(throws: RoostError.self) { try await fx.client().signUp(email: email, password: "compiler-pioneer") }
            #expect(taken?.code == .conflict)
            // Verifying while signed in refreshes the session's copy of the record.
            try await app.verifyEmail(token: try #require(try await mail.waitForMail(to: email).token))
            #expect(try await app.accountSecurity().emailVerified)
        }

        @Test("a password reset by code signs in and ends the other sessions; by link token too; codes are single use")
        func passwordReset() async throws {
            let mail = try MailCatcher()
            let fx = try Self.fixture(mail, unverifiedLogin: true)
            let email = Self.address("alan")
            let phone = fx.client()
            _ = try await phone.signUp(email: email, password: "first-password")
            _ = try await mail.waitForMail(to: email)  // the verification mail comes first

            let laptop = fx.client()
            let before = mail.count(to: email)
            try await laptop.requestPasswordReset(email: email)
            // An unknown address gets the same quiet answer.
            try await laptop.requestPasswordReset(email: Self.address("nobody"))
            let reset = try await mail.waitForMail(to: email, after: before)
            let code = try #require(reset.code)
            let session = try await laptop.resetPassword(email: email, code: code, newPassword: "second-password")
            #expect(laptop.userID == session.user.id && phone.userID == session.user.id)
            let ended = await #expect(throws: RoostError.self) { try await phone.currentUser() }
            #expect(ended?.code == .invalidToken)
            let reused = await #expect(throws: RoostError.self) {
                try await fx.client().resetPassword(email: email, code: code, newPassword: "third-password")
            }
            #expect(reused?.code == .invalidCode)
            try await fx.client().logIn(email: email, password: "second-password")

            try await fx.client().requestPasswordReset(email: email)
            let link = try await mail.waitForMail(to: email, after: before + 1)
            try await fx.client().resetPassword(token: try #require(link.token), newPassword: "fourth-password")
            try await fx.client().logIn(email: email, password: "fourth-password")
            let old = await #expect(throws: RoostError.self) { try await fx.client().logIn(email: email, password: "second-password") }
            #expect(old?.code == .invalidCredentials)
        }

        @Test("an email change needs the password, mails the new address, and moves the account")
        func emailChange() async throws {
            let mail = try MailCatcher()
            let fx = try Self.fixture(mail, unverifiedLogin: true)
            let (email, moved) = (Self.address("edsger"), Self.address("dijkstra"))
            let app = fx.client()
            _ = try await app.signUp(email: email, password: "goto-considered")
            let wrong = await #expect(throws: RoostError.self) { try await app.requestEmailChange(to: moved, password: "not-it-at-all") }
            #expect(wrong?.code != nil)
            #expect(app.session != nil, "a wrong password does not end the session")

            try await app.requestEmailChange(to: moved, password: "goto-considered")
            let code = try #require(try await mail.waitForMail(to: moved).code)
            #expect(try await app.confirmEmailChange(code: code) == moved)
            #expect(app.session?.user.fields["email"] == .string(moved))
            let security = try await app.accountSecurity()
            #expect(security.email == moved && security.emailVerified)
            try await fx.client().logIn(email: moved, password: "goto-considered")
            let old = await #expect(throws: RoostError.self) { try await fx.client().logIn(email: email, password: "goto-considered") }
            #expect(old?.code == .invalidCredentials)
            await #expect(throws: RoostError.notSignedIn) { try await fx.client().confirmEmailChange(code: code) }
        }

        @Test("a guest writes, then upgrades keeping its id and documents; guests can be off")
        func guest() async throws {
            let mail = try MailCatcher()
            let fx = try Self.fixture(mail)
            let app = fx.client()
            let session = try await app.signInAsGuest()
            #expect(session.user.isGuest && session.user.username.isEmpty)
            #expect(try await app.accountSecurity().anonymous)
            let notes = app.collection("notes", of: JSONValue.self)
            let note = try await notes.create(["text": "written as a guest"])

            let name = "guest-\(UUID().uuidString.prefix(6).lowercased())"
            let user = try await app.upgradeGuest(username: name, password: "now-with-a-password")
            #expect(user.id == session.user.id && !user.isGuest && user.username == name)
            #expect(app.session?.user.username == name)
            #expect(try await notes.get(note.id).value["text"] == "written as a guest")
            let again = await #expect(throws: RoostError.self) { try await app.upgradeGuest(username: name + "x", password: "another-password") }
            #expect(again?.code == .conflict)

            let relogged = fx.client()
            try await relogged.logIn(username: name, password: "now-with-a-password")
            #expect(relogged.userID == session.user.id)
            #expect(try await relogged.collection("notes", of: JSONValue.self).get(note.id).value["text"] == "written as a guest")

            let closed = try Self.fixture(mail, guests: false)
            let off = await #expect(throws: RoostError.self) { try await closed.client().signInAsGuest() }
            #expect(off?.status == 403)
        }

        @Test("two-factor: set up, enable, a log-in needs a code, sensitive changes need one, recovery codes, disable")
        func twoFactor() async throws {
            let mail = try MailCatcher()
            let fx = try Self.fixture(mail)
            let alice = try await fx.user("alice")
            let name = alice.session!.user.username
            let setup = try await alice.setUpTwoFactor(password: "password-alice")
            #expect(setup.otpauthURI.hasPrefix("otpauth://totp/"))
            let badFirst = await #expect(throws: RoostError.self) { try await alice.enableTwoFactor(code: Self.notThe(TOTP.code(secret: setup.secret))) }
            #expect(badFirst?.code == .invalidCode)
            let recovery = try await alice.enableTwoFactor(code: TOTP.code(secret: setup.secret))
            #expect(recovery.count == 10)
            #expect(try await alice.accountSecurity().twoFactor)

            let phone = fx.client()
            var challenge: TwoFactorChallenge?
            do { try await phone.logIn(username: name, password: "password-alice"); Issue.record("signed in without a code") }
            catch RoostError.twoFactorRequired(let c) { challenge = c }
            let ticket = try #require(challenge?.ticket)
            #expect(phone.session == nil)
            let wrong = await #expect(throws: RoostError.self) { try await phone.verifyTwoFactor(ticket: ticket, code: "12345x") }
            #expect(wrong?.status == 400)
            // The code of the next step (accepted: clocks drift) so it is not the one enable used.
            let session = try await phone.verifyTwoFactor(ticket: ticket, code: TOTP.code(secret: setup.secret, stepOffset: 1))
            #expect(session.user.id == alice.userID)
            #expect(try await phone.currentUser().id == alice.userID)

            let noCode = await #expect(throws: RoostError.self) { try await alice.changePassword(from: "password-alice", to: "password-alice-2") }
            #expect(noCode?.code == .twoFactorRequired)
            try await alice.changePassword(from: "password-alice", to: "password-alice-2", twoFactorCode: recovery[0])
            let usedRecovery = await #expect(throws: RoostError.self) { try await alice.disableTwoFactor(password: "password-alice-2", code: recovery[0]) }
            #expect(usedRecovery?.status == 400 || usedRecovery?.status == 403)
            try await alice.disableTwoFactor(password: "password-alice-2", code: recovery[1])
            #expect(try await alice.accountSecurity().twoFactor == false)
            try await fx.client().logIn(username: name, password: "password-alice-2")
        }

        @Test("Sign in with a provider's ID token: a new account, the same one next time; a replayed token or wrong nonce is refused; link and unlink")
        func idTokenSignIn() async throws {
            let mail = try MailCatcher()
            let issuer = try OIDCIssuer(directory: FileManager.default.temporaryDirectory.appendingPathComponent("roostkit-oidc-\(UUID().uuidString)"))
            let fx = try Self.fixture(mail, issuer: issuer)
            let sub = "apple-user-\(UUID().uuidString.prefix(8))"
            let nonce = SignInNonce()
            let token = try issuer.token(sub: sub, rawNonce: nonce.raw)
            let phone = fx.client()
            let first = try await phone.signIn(provider: "company", idToken: token, rawNonce: nonce.raw)
            #expect(phone.userID == first.user.id)
            let security = try await phone.accountSecurity()
            #expect(security.identities.map(\.provider) == ["company"] && !security.hasPassword)

            let replayed = await #expect(throws: RoostError.self) { try await fx.client().signIn(provider: "company", idToken: token, rawNonce: nonce.raw) }
            #expect(replayed?.code == .invalidIDToken)
            let other = SignInNonce()
            let wrongNonce = await #expect(throws: RoostError.self) {
                try await fx.client().signIn(provider: "company", idToken: try issuer.token(sub: sub, rawNonce: nonce.raw), rawNonce: other.raw)
            }
            #expect(wrongNonce?.code == .invalidIDToken)
            let again = SignInNonce()
            let second = try await fx.client().signIn(provider: "company", idToken: try issuer.token(sub: sub, rawNonce: again.raw), rawNonce: again.raw)
            #expect(second.user.id == first.user.id, "the identity signs in to the same account")

            // Its only way in cannot be unlinked; a password account links and unlinks it.
            let only = await #expect(throws: RoostError.self) { try await phone.unlink(provider: "company") }
            #expect(only?.code == .conflict)
            let bob = try await fx.user("bob")
            let bobNonce = SignInNonce()
            try await bob.link(provider: "company", idToken: try issuer.token(sub: "bob-\(UUID().uuidString.prefix(6))", rawNonce: bobNonce.raw),
                               rawNonce: bobNonce.raw)
            #expect(try await bob.accountSecurity().identities.map(\.provider) == ["company"])
            try await bob.unlink(provider: "company")
            #expect(try await bob.accountSecurity().identities.isEmpty)

            // A guest linking a provider keeps its id.
            let guest = fx.client()
            let guestSession = try await guest.signInAsGuest()
            let guestNonce = SignInNonce()
            try await guest.link(provider: "company", idToken: try issuer.token(sub: "guest-\(UUID().uuidString.prefix(6))", rawNonce: guestNonce.raw),
                                 rawNonce: guestNonce.raw)
            #expect(guest.userID == guestSession.user.id)
            #expect(try await guest.accountSecurity().anonymous == false)
        }

        static func notThe(_ code: String) -> String { code == "000000" ? "111111" : "000000" }

        @Test("ID tokens: a refused token and an unknown provider are typed errors; linking a bad one keeps the session")
        func idTokens() async throws {
            let mail = try MailCatcher()
            let fx = try Self.fixture(mail)
            let nonce = SignInNonce()
            let refused = await #expect(throws: RoostError.self) {
                try await fx.client().signIn(provider: "company", idToken: "eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.", rawNonce: nonce.raw)
            }
            #expect(refused?.code == .invalidIDToken)
            let unknown = await #expect(throws: RoostError.self) {
                try await fx.client().signIn(provider: "nowhere", idToken: "a.b.c", rawNonce: nonce.raw)
            }
            #expect(unknown?.status == 400)

            let alice = try await fx.user("alice")
            let link = await #expect(throws: RoostError.self) {
                try await alice.link(provider: "company", idToken: "eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.", rawNonce: nonce.raw)
            }
            #expect(link?.code == .invalidIDToken)
            #expect(alice.session != nil, "a refused ID token is not a refused session")
            #expect(try await alice.accountSecurity().identities.isEmpty)
            let unlink = await #expect(throws: RoostError.self) { try await alice.unlink(provider: "company") }
            #expect(unlink?.status == 404)
        }
    }
}
