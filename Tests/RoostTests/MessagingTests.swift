import RoostTestSupport
import Foundation
import Testing

/// The seed messaging app's flow against a real roostd: two users write to
/// each other, a third is kept out, threads track the last message, and
/// `resolve` expands references only where the reader may look.
@Suite struct MessagingTests {
    struct User {
        let id: String
        let token: String
        var auth: [String: String] { ["Authorization": "Bearer \(token)"] }
    }

    static func signUp(_ base: String, _ name: String) throws -> User {
        let r = try HTTP.json("POST", "\(base)/users", ["username": name, "password": "correct horse battery", "name": name.capitalized])
        #expect(r.status == 201)
        let user = try #require(r.object["user"] as? [String: Any])
        return User(id: try #require(user["_id"] as? String), token: try #require(r.object["token"] as? String))
    }

    @Test func twoUsersExchangeMessagesAndAThirdIsKeptOut() throws {
        let roost = try RoostProcess(config: "default_permission: shared\npassword_cost: interactive\n")
        let base = roost.baseURL
        let alice = try Self.signUp(base, "alice"), bob = try Self.signUp(base, "bob"), eve = try Self.signUp(base, "eve")
        let thread = [alice.id, bob.id].sorted().joined(separator: ":")

        // Alice writes to Bob: sender, ACL and thread id are set by the hooks.
        let first = try HTTP.json("POST", "\(base)/messages", ["recipientId": bob.id, "text": "hi bob"], headers: alice.auth)
        #expect(first.status == 201)
        #expect(first.object["senderId"] as? String == alice.id)
        #expect(first.object["threadId"] as? String == thread)
        let firstID = try #require(first.object["_id"] as? String)

        // Sending as someone else, or to nobody, is refused and writes nothing.
        let forged = try HTTP.json("POST", "\(base)/messages", ["recipientId": bob.id, "senderId": eve.id, "text": "x"], headers: alice.auth)
        #expect(forged.status == 403)
        let nobody = try HTTP.json("POST", "\(base)/messages", ["recipientId": "no-such-user", "text": "x"], headers: alice.auth)
        #expect(nobody.status == 400)
        let wrongThread = try HTTP.json("POST", "\(base)/messages", ["recipientId": bob.id, "threadId": "a:b", "text": "x"], headers: alice.auth)
        #expect(wrongThread.status == 400)
        let anonymous = try HTTP.json("POST", "\(base)/messages", ["recipientId": bob.id, "text": "x"])
        #expect(anonymous.status == 401)
        // A refused message left nothing behind: one message, the thread untouched.
        #expect(try HTTP.send("GET", "\(base)/messages", headers: alice.auth).array.count == 1)
        #expect(try HTTP.send("GET", "\(base)/threads", headers: alice.auth).array.count == 1)

        // The thread exists, points at the message, and resolve expands it.
        let created = try HTTP.send("GET", "\(base)/threads/\(thread)?resolve=lastMessage", headers: bob.auth)
        #expect(created.status == 200)
        let last = try #require(created.object["lastMessage"] as? [String: Any])
        #expect(last["_id"] as? String == firstID)
        #expect(last["text"] as? String == "hi bob")
        #expect(created.object["participants"] as? [String] == [alice.id, bob.id].sorted())

        // Bob answers: the same thread now points at his message.
        let reply = try HTTP.json("POST", "\(base)/messages", ["recipients": [alice.id], "text": "hi alice"], headers: bob.auth)
        #expect(reply.status == 201)
        let replyID = try #require(reply.object["_id"] as? String)
        let threads = try HTTP.send("GET", "\(base)/threads?resolve=lastMessage", headers: alice.auth)
        #expect(threads.array.count == 1)
        let lastNow = try #require(threads.array.first?["lastMessage"] as? [String: Any])
        #expect(lastNow["_id"] as? String == replyID)
        #expect(lastNow["text"] as? String == "hi alice")
        // Without resolve the reference is returned as stored.
        let raw = try HTTP.send("GET", "\(base)/threads/\(thread)", headers: alice.auth)
        let ref = try #require(raw.object["lastMessage"] as? [String: Any])
        #expect(ref["_type"] as? String == "ref" && ref["_collection"] as? String == "messages" && ref["_id"] as? String == replyID)

        // Both see both messages of the thread; Eve sees none, nor the thread.
        let query = HTTP.iosEscape("{\"threadId\":\"\(thread)\"}")
        #expect(try HTTP.send("GET", "\(base)/messages?query=\(query)", headers: alice.auth).array.count == 2)
        #expect(try HTTP.send("GET", "\(base)/messages?query=\(query)", headers: bob.auth).array.count == 2)
        #expect(try HTTP.send("GET", "\(base)/messages", headers: eve.auth).array.isEmpty)
        #expect(try HTTP.send("GET", "\(base)/messages/\(firstID)", headers: eve.auth).status == 404)
        #expect(try HTTP.send("GET", "\(base)/threads/\(thread)", headers: eve.auth).status == 404)
        #expect(try HTTP.send("GET", "\(base)/threads", headers: eve.auth).array.isEmpty)

        // Threads are written by the server only: a client cannot squat one.
        let squat = try HTTP.json("PUT", "\(base)/threads/eve-notes", ["participants": ["x"]], headers: eve.auth)
        #expect(squat.status == 403)

        // resolve respects access: a document Eve may read that points at a
        // message she may not stays an unexpanded reference.
        let bait = try HTTP.json("PUT", "\(base)/notes/eve-notes", [
            "lastMessage": ["_type": "ref", "_collection": "messages", "_id": firstID],
        ], headers: eve.auth)
        #expect(bait.status == 201)
        let peek = try HTTP.send("GET", "\(base)/notes/eve-notes?resolve=lastMessage", headers: eve.auth)
        #expect(peek.status == 200)
        let unresolved = try #require(peek.object["lastMessage"] as? [String: Any])
        #expect(unresolved["_type"] as? String == "ref")
        #expect(unresolved["text"] == nil)
        #expect(try HTTP.send("GET", "\(base)/notes/eve-notes?resolve=a.b", headers: eve.auth).status == 400)
        roost.stop()
    }

    @Test func pushDevicesBelongToOneUserAtATime() throws {
        let roost = try RoostProcess(config: "default_permission: shared\npassword_cost: interactive\n")
        let base = roost.baseURL
        let alice = try Self.signUp(base, "alice"), bob = try Self.signUp(base, "bob")

        #expect(try HTTP.json("POST", "\(base)/push/devices", ["platform": "ios", "token": "0a1b"]).status == 401)
        #expect(try HTTP.json("POST", "\(base)/push/devices", ["platform": "symbian", "token": "0a1b"], headers: alice.auth).status == 400)
        #expect(try HTTP.json("POST", "\(base)/push/devices", ["platform": "ios", "token": "0a1b"], headers: alice.auth).status == 201)
        #expect(try HTTP.json("POST", "\(base)/push/devices", ["platform": "ios", "token": "0a1b"], headers: alice.auth).status == 200)
        #expect(try HTTP.send("GET", "\(base)/push/devices", headers: alice.auth).array.count == 1)

        // Bob signs in on Alice's old phone: the token moves to him.
        let moved = try HTTP.json("POST", "\(base)/push/devices", ["platform": "ios", "token": "0a1b"], headers: bob.auth)
        #expect(moved.status == 201)
        #expect(moved.object["userId"] as? String == bob.id)
        #expect(try HTTP.send("GET", "\(base)/push/devices", headers: alice.auth).array.isEmpty)
        #expect(try HTTP.send("GET", "\(base)/push/devices", headers: bob.auth).array.count == 1)

        // Only its owner removes it.
        #expect(try HTTP.send("DELETE", "\(base)/push/devices/0a1b", headers: alice.auth).status == 404)
        #expect(try HTTP.send("DELETE", "\(base)/push/devices/0a1b", headers: bob.auth).status == 200)
        #expect(try HTTP.send("GET", "\(base)/push/devices", headers: bob.auth).array.isEmpty)
        roost.stop()
    }
}
