// RoostChat: a command-line chat client on RoostKit. See README.md beside this file.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import RoostKit

struct Message: Codable, Sendable {
    var recipientId: String?
    var text: String
    var senderId: String?
}

/// A network that is never there, for `--offline`.
struct NoNetwork: HTTPTransport {
    func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) { throw URLError(.notConnectedToInternet) }
    func stream(_ request: URLRequest) async throws -> (HTTPURLResponse, AsyncThrowingStream<Data, Error>) {
        throw URLError(.notConnectedToInternet)
    }
}

let usage = """
    usage: roostchat [--server URL] [--home DIR] [--offline] COMMAND
      signup USER PASSWORD [FIRST NAME]   create an account and sign in
      login USER PASSWORD                 sign in
      logout                              sign out
      users                               the member directory
      send USER TEXT...                   send a message (queued when offline)
      inbox                               sync, then show your messages
      listen                              print messages as they arrive (Ctrl-C stops)
      sync                                send queued messages, pull new ones
      pending                             messages waiting to be sent
    The server defaults to $ROOST_URL or http://127.0.0.1:8080; state lives in
    $ROOSTCHAT_HOME or ~/.roostchat.
    """

/// Writes a line at once, unbuffered, also into a pipe (so `listen` output is never held back).
func print(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

var args = Array(CommandLine.arguments.dropFirst())
@MainActor func option(_ name: String) -> String? {
    guard let i = args.firstIndex(of: name), i + 1 < args.count else { return nil }
    defer { args.removeSubrange(i...(i + 1)) }
    return args[i + 1]
}
let env = ProcessInfo.processInfo.environment
let server = option("--server") ?? env["ROOST_URL"] ?? "http://127.0.0.1:8080"
let home = URL(fileURLWithPath: option("--home") ?? env["ROOSTCHAT_HOME"]
               ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".roostchat").path)
let offline = args.contains("--offline")
args.removeAll { $0 == "--offline" }
guard let command = args.first, let baseURL = URL(string: server) else { print(usage); exit(2) }
let rest = Array(args.dropFirst())

let roost = RoostClient(baseURL: baseURL, tokenStore: FileTokenStore(url: home.appendingPathComponent("session.json")),
                        transport: offline ? NoNetwork() : URLSessionTransport())

/// The signed-in user's local store: their messages and the member directory.
@MainActor func openStore() throws -> OfflineStore {
    guard let me = roost.userID else { print("Sign in first: roostchat login USER PASSWORD"); exit(1) }
    return try OfflineStore(client: roost, url: home.appendingPathComponent("\(me).sqlite"),
                            mirrors: [Mirror("messages"), Mirror("users")])
}

func syncQuietly(_ store: OfflineStore) async {
    do {
        let r = try await store.sync()
        if r.sent > 0 { print("(sent \(r.sent) queued message\(r.sent == 1 ? "" : "s"))") }
        for c in try await store.conflicts() {
            print("(not delivered: \(c.conflict.local?["text"]?.stringValue ?? c.conflict.id) — \(c.reason))")
            try await store.dismissConflict(c.sequence)
        }
    } catch let error as RoostError where error.isOffline {
        print("(offline: showing the local copy; queued messages go out on the next sync)")
    } catch {
        print("(sync failed: \(error))")
    }
}

func names(_ store: OfflineStore) async throws -> [String: String] {
    let users = try await store.collection("users", of: JSONValue.self).find()
    return Dictionary(users.compactMap { u in u.value["username"]?.stringValue.map { (u.id, $0) } }, uniquingKeysWith: { a, _ in a })
}

func show(_ m: Entity<Message>, _ names: [String: String], pending: Bool = false) {
    let from = m.value.senderId.flatMap { names[$0] } ?? (m.value.senderId == nil ? "me" : "?")
    let to = m.value.recipientId.flatMap { names[$0] } ?? ""
    let when = m.createdAt.map { String($0.prefix(19)).replacingOccurrences(of: "T", with: " ") } ?? "queued"
    print("[\(when)] \(from)\(to.isEmpty ? "" : " → \(to)"): \(m.value.text)\(pending ? "  (not sent yet)" : "")")
}

do {
    switch command {
    case "signup" where rest.count >= 2:
        let profile: [String: String] = rest.count > 2 ? ["firstName": rest[2...].joined(separator: " ")] : [:]
        let s = try await roost.signUp(username: rest[0], password: rest[1], profile: profile)
        print("Welcome, \(s.user.username) (\(s.user.id)).")
    case "login" where rest.count == 2:
        let s = try await roost.logIn(username: rest[0], password: rest[1])
        print("Signed in as \(s.user.username).")
    case "logout":
        try await roost.logOut()
        print("Signed out.")
    case "users":
        let store = try openStore()
        await syncQuietly(store)
        for u in try await store.collection("users", of: JSONValue.self).find(Query().sorted(by: "username")) {
            print("\(u.value["username"]?.stringValue ?? "?")\t\(u.value["firstName"]?.stringValue ?? "")")
        }
    case "send" where rest.count >= 2:
        let store = try openStore()
        let directory = try await names(store)
        guard let to = directory.first(where: { $0.value == rest[0] })?.key else {
            print("No user \(rest[0]) in the local directory; run `roostchat users` while online."); exit(1)
        }
        let m = try await store.collection("messages", of: Message.self).create(Message(recipientId: to, text: rest[1...].joined(separator: " ")))
        print("Queued \(m.id).")
        await syncQuietly(store)
    case "inbox":
        let store = try openStore()
        await syncQuietly(store)
        let directory = try await names(store)
        let queued = Set(try await store.pendingWrites().map(\.id))
        for m in try await store.collection("messages", of: Message.self).find(Query().sorted(by: "_createdAt")) {
            show(m, directory, pending: queued.contains(m.id))
        }
    case "listen":
        let store = try openStore()
        await syncQuietly(store)
        let directory = try await names(store)
        print("Listening for messages (Ctrl-C to stop)…")
        for try await event in store.liveUpdates("messages") where event.kind == .create {
            if let m = try event.entity(as: Message.self) { show(m, directory) }
        }
    case "sync":
        let r = try await openStore().sync()
        print("sent \(r.sent), conflicts \(r.conflicts), changed \(r.changed), deleted \(r.deleted), still queued \(r.pending)")
    case "pending":
        for w in try await openStore().pendingWrites() {
            print("\(w.sequence)\t\(w.operation.rawValue)\t\(w.collection)/\(w.id)\t\(w.body?["text"]?.stringValue ?? "")")
        }
    default:
        print(usage)
        exit(2)
    }
} catch {
    print("error: \(error)")
    exit(1)
}
