// WaterCooler: sign-up with a profile picture, the member directory, private
// messages in threads, live delivery and push registration. The model layer
// of the WaterCooler app run as a command-line walk-through for two people on
// one server; see README.md beside this file.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import RoostKit

/// A private message; the server sets the sender, the ACL and the thread.
struct Message: Codable, Sendable {
    var recipientId: String
    var text: String
    var senderId: String?
    var threadId: String?
}

/// A thread between its members, kept by the server as messages are sent.
struct Thread: Codable, Sendable {
    var members: [String]?
    var lastMessage: JSONValue?
    var lastMessageAt: String?
}

func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

func argument(_ name: String) -> String? {
    let args = CommandLine.arguments
    guard let i = args.firstIndex(of: name), i + 1 < args.count else { return nil }
    return args[i + 1]
}

guard let server = URL(string: argument("--server") ?? ProcessInfo.processInfo.environment["ROOST_URL"] ?? "http://127.0.0.1:8080"),
      let picturePath = argument("--picture") else {
    say("usage: WaterCooler --picture IMAGE [--server URL] [--home DIR]")
    exit(2)
}
let home = URL(fileURLWithPath: argument("--home") ?? NSTemporaryDirectory() + "watercooler-\(UUID().uuidString)")
let suffix = UUID().uuidString.prefix(6).lowercased()

/// One person's app: a client with its own session file and offline store.
func app(_ name: String) -> RoostClient {
    RoostClient(baseURL: server, tokenStore: FileTokenStore(url: home.appendingPathComponent("\(name)-session.json")))
}

do {
    // 1. Sign-up with a profile picture: upload it, then point the profile at it.
    let alice = app("alice"), bob = app("bob")
    try await alice.signUp(username: "alice-\(suffix)", password: "alice's passphrase", profile: ["firstName": "Alice", "title": "Engineer"])
    let picture = try await alice.files.upload(Data(contentsOf: URL(fileURLWithPath: picturePath)), contentType: "image/png")
    let me = try await alice.updateProfile(["picture": .string(picture.id)])
    say("alice signed up with picture \(me.fields["picture"]?.stringValue == picture.id ? "set" : "missing")")
    try await bob.signUp(username: "bob-\(suffix)", password: "bob's passphrase", profile: ["firstName": "Bob"])
    say("bob signed up")

    // 2. Bob's phone registers for push, and follows his messages and threads live.
    let device = try await bob.registerPushDevice(token: "00ff\(suffix)", platform: .ios)
    say("bob's push device: \(device.platform)")
    let bobStore = try OfflineStore(client: bob, url: home.appendingPathComponent("bob.sqlite"),
                                    mirrors: [Mirror("messages"), Mirror("threads"), Mirror("users")])
    try await bobStore.sync()
    // The server writes a message, then its thread (the thread points at its last message),
    // in one transaction: the mirror has both once the thread's event follows the message's.
    let arrived = Task { () -> String? in
        var text: String?
        for try await event in bobStore.liveUpdates() {
            if event.collection == "messages" && event.kind == .create { text = try event.entity(as: Message.self)?.value.text }
            if event.collection == "threads" && text != nil { return text }
        }
        return text
    }
    try await Task.sleep(nanoseconds: 300_000_000)

    // 3. Alice finds Bob in the directory (with his picture's thumbnail, were there one) and writes to him.
    let directory = try await alice.users(Query(Field("username") == "bob-\(suffix)"))
    guard let bobUser = directory.first else { throw RoostError.invalidResponse("bob is not in the directory") }
    say("directory: \(bobUser.username) (\(bobUser.fields["firstName"]?.stringValue ?? "?"))")
    let sent = try await alice.collection("messages", of: Message.self).create(Message(recipientId: bobUser.id, text: "Coffee at the water cooler?"))
    say("alice sent: \(sent.value.text)")

    // 4. Bob's phone gets it live, and his mirror has the message and the thread.
    let live = try await withThrowingTaskGroup(of: String?.self) { group in
        group.addTask { try await arrived.value }
        group.addTask { try await Task.sleep(nanoseconds: 10_000_000_000); return nil }
        let first = try await group.next() ?? nil
        group.cancelAll()
        arrived.cancel()
        return first
    }
    say("bob got live: \(live ?? "nothing")")
    let threads = try await bobStore.collection("threads", of: Thread.self).find()
    say("bob's threads: \(threads.count)")

    // 5. Bob answers in the thread; Alice reads the conversation, the last message resolved.
    try await bob.collection("messages", of: Message.self).create(Message(recipientId: alice.userID!, text: "On my way."))
    let conversation = try await alice.collection("messages", of: Message.self)
        .find(Query(Field("threadId") == sent.value.threadId ?? "").sorted(by: "_createdAt"))
    for m in conversation {
        say("  \(m.value.senderId == alice.userID ? "alice" : "bob"): \(m.value.text)")
    }
    let thread = try await alice.collection("threads", of: Thread.self).get(sent.value.threadId ?? "", resolving: ["lastMessage"])
    say("thread's last message: \(thread.value.lastMessage?["text"]?.stringValue ?? "?")")
    let avatar = try await bob.files.thumbnail(picture.id, size: 128)
    say("bob sees alice's picture: \(avatar.isEmpty ? "no" : "yes")")
} catch {
    say("error: \(error)")
    exit(1)
}
