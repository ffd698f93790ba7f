import Foundation
import Testing
@testable import RoostKit

extension AgainstRoostd {
    @Suite("Accounts") struct Accounts {
        struct Profile: Codable, Sendable { var firstName: String; var email: String }

        @Test("sign up with a profile, current user, log out, log in")
        func lifecycle() async throws {
            let fx = try Fixture()
            let store = FileTokenStore(url: fx.scratch.appendingPathComponent("session.json"))
            let client = fx.client(tokenStore: store)
            let name = "ada-\(UUID().uuidString.prefix(6).lowercased())"
            let session = try await client.signUp(username: name, password: "analytical-engine",
                                                  profile: Profile(firstName: "Ada", email: "ada@example.com"))
            #expect(session.user.username == name)
            #expect(client.userID == session.user.id)

            let me = try await client.currentUser()
            #expect(me.id == session.user.id)
            #expect(try me.profile(as: Profile.self).email == "ada@example.com")

            // The session survives a new client on the same token store (an app relaunch).
            let relaunched = fx.client(tokenStore: store)
            #expect(relaunched.userID == session.user.id)
            #expect(try await relaunched.currentUser().username == name)

            try await client.logOut()
            #expect(client.session == nil)
            #expect(try store.load() == nil)
            await #expect(throws: RoostError.notSignedIn) { try await client.currentUser() }
            // The revoked token no longer works for the relaunched copy either.
            let revoked = await #expect(throws: RoostError.self) { try await relaunched.currentUser() }
            #expect(revoked?.code == .invalidToken)

            try await client.logIn(username: name, password: "analytical-engine")
            #expect(try await client.currentUser().id == session.user.id)
        }

        @Test("wrong password and duplicate sign-up are typed errors")
        func errors() async throws {
            let fx = try Fixture()
            let alice = try await fx.user("alice")
            let name = alice.session!.user.username
            let anon = fx.client()
            let wrong = await #expect(throws: RoostError.self) { try await anon.logIn(username: name, password: "not-the-password") }
            #expect(wrong?.code == .invalidCredentials)
            let taken = await #expect(throws: RoostError.self) { try await anon.signUp(username: name, password: "password-xyz") }
            #expect(taken?.code == .conflict)
        }

        @Test("the member directory lists users without their private fields")
        func directory() async throws {
            let fx = try Fixture()
            let alice = try await fx.user("alice")
            let bob = try await fx.user("bob")
            let users = try await alice.users(Query(Field("_id") == bob.userID!))
            #expect(users.map(\.id) == [bob.userID!])
            #expect(users.first?.fields["firstName"] == "Bob")
        }
    }
}
