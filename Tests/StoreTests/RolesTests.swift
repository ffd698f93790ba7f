import JSON
import Store
import StorePostgres
import StoreSQLite
import Testing

/// Role names, and roles on both engines: members, the roles a session
/// carries, the `_roles` feed rows, and `_acl` entries that name no one.
@Suite("Roles")
struct RolesTests {
    static let names: [(String, Bool)] = [
        ("a", true), ("moderators", true), ("team.blue", true), ("org-42_admins", true), ("A.b-C_9", true),
        (String(repeating: "x", count: 64), true),
        ("", false), (String(repeating: "x", count: 65), false), ("has space", false), ("role:mod", false),
        ("a/b", false), ("ünï", false), ("a,b", false), ("tab\t", false), ("nul\u{0}", false), ("emoji🙂", false),
    ]

    @Test("a role name is 1 to 64 of [A-Za-z0-9_.-]", arguments: names)
    func roleNames(_ text: String, _ valid: Bool) throws {
        #expect((RoleName(text) != nil) == valid, "\(text.debugDescription)")
        if valid {
            #expect(try RoleName.parse(text).aclEntry == "role:" + text)
        } else {
            #expect(throws: StoreError.self) { try RoleName.parse(text) }
        }
    }

    @Test("only entries new to the stored _acl are checked, read first, each once")
    func newPrincipals() throws {
        let acl = object(#"{"read":["a","b","x"],"write":["c","a","d"]}"#)
        let old = object(#"{"read":["c"],"write":["b"]}"#)
        #expect(Roles.newPrincipals(acl, existing: old).map { "\($0.list):\($0.entry)" } == ["read:a", "read:x", "write:d"])
        #expect(Roles.newPrincipals(acl, existing: nil).count == 5)
        #expect(Roles.list("b,a,c") == ["a", "b", "c"] && Roles.list(nil) == [] && Roles.list("") == [])
    }

    @Test("SQLite: members, session roles, feed rows and _acl checks")
    func sqlite() throws {
        let store = try TestStore()
        try Self.scenario(writer: store.writer, reader: store.reader)
    }

    @Test("PostgreSQL: members, session roles, feed rows and _acl checks")
    func postgresql() throws {
        let store = try PGTestStore()
        try Self.scenario(writer: store.writer, reader: store.reader)
    }

    static func run<T>(_ writer: any DocumentWriting, _ body: @escaping (any DocumentWriting) throws -> T) throws -> T {
        try writer.commitBatch([body])[0].get()
    }

    static func scenario(writer: any DocumentWriting, reader: any DocumentReading) throws {
        let mods = try RoleName.parse("mods"), blue = try RoleName.parse("blue")
        let start = try reader.feedHead()
        try run(writer) { w in
            try w.addCredentials(userID: "alice", username: "alice", passwordHash: "")
            try w.addCredentials(userID: "bob", username: "bob", passwordHash: "")
            try w.createSession(userID: "alice", tokenHash: "t-alice", now: 100, lifetime: 1000)
        }
        #expect(try run(writer) { try $0.createRole(mods) } == true)
        #expect(try run(writer) { try $0.createRole(mods) } == false)
        #expect(try run(writer) { try $0.createRole(blue) } == true)
        #expect(try reader.session(tokenHash: "t-alice", now: 200)?.roles == [])

        #expect(try run(writer) { try $0.addMember(mods, userID: "alice") } == .added)
        #expect(try run(writer) { try $0.addMember(mods, userID: "alice") } == .unchanged)
        #expect(try run(writer) { try $0.addMember(blue, userID: "alice") } == .added)
        #expect(try run(writer) { try $0.addMember(blue, userID: "bob") } == .added)
        #expect(try run(writer) { try $0.addMember(try RoleName.parse("nope"), userID: "bob") } == .noSuchRole)
        #expect(try run(writer) { try $0.addMember(mods, userID: "carol") } == .noSuchUser)
        #expect(try reader.session(tokenHash: "t-alice", now: 200)?.roles == ["blue", "mods"])
        #expect(try reader.roles(userID: "alice") == ["blue", "mods"])
        #expect(try reader.roles().map { "\($0.name)=\($0.members)" } == ["blue=2", "mods=1"])
        #expect(try reader.members(of: blue, after: nil, limit: 1)?.map(\.userID) == ["alice"])
        #expect(try reader.members(of: blue, after: "alice", limit: 10)?.map { "\($0.userID):\($0.username ?? "-")" } == ["bob:bob"])
        #expect(try reader.members(of: try RoleName.parse("nope"), after: nil, limit: 10) == nil)

        // _acl entries: users and existing roles pass; names, unknown roles and case variants do not.
        #expect(try run(writer) { try $0.unknownPrincipals(["alice", "role:mods", "Alice", "role:nope", "role:", "mods", "role:MODS"]) }
                == ["Alice", "role:nope", "role:", "mods", "role:MODS"])
        let scope = AccessScope(principal: .user("alice"), level: .private)
        let bad = object(#"{"_id":"alice:1","_acl":{"read":["bob","role:blue"],"write":["carol"]}}"#)
        #expect {
            try run(writer) { try $0.insert(into: "notes", bad, scope: scope) }
        } throws: { error in
            "\(error)".contains(#"_acl.write names \"carol\""#)
        }
        let good = object(#"{"_id":"alice:1","_acl":{"read":["bob","role:blue"]}}"#)
        _ = try run(writer) { try $0.insert(into: "notes", good, scope: scope) }
        // Removing the role and bob leaves the stale entries; a patch of another field passes.
        #expect(try run(writer) { try $0.deleteRole(blue) } == true)
        #expect(try run(writer) { try $0.deleteRole(blue) } == false)
        try run(writer) { try $0.deleteCredentials(userID: "bob") }
        let patched = try run(writer) { try $0.patch(in: "notes", id: "alice:1", object(#"{"n":1}"#), scope: scope) }
        #expect(patched.contains("role:blue"))
        // Moving a stale entry from read to write is not new either; adding one is refused.
        _ = try run(writer) { try $0.patch(in: "notes", id: "alice:1", object(#"{"_acl":{"read":["role:blue"],"write":["bob"]}}"#), scope: scope) }
        #expect(throws: (any Error).self) {
            try run(writer) { try $0.patch(in: "notes", id: "alice:1", object(#"{"_acl":{"write":["bob","carol"]}}"#), scope: scope) }
        }
        #expect(try reader.session(tokenHash: "t-alice", now: 200)?.roles == ["mods"])
        #expect(try run(writer) { try $0.removeMember(mods, userID: "alice") } == true)
        #expect(try run(writer) { try $0.removeMember(mods, userID: "alice") } == false)
        #expect(try reader.session(tokenHash: "t-alice", now: 200)?.roles == [])

        // One `_roles` feed row per membership change, id = the user.
        let feed = try reader.changes(after: start, limit: 100).changes.filter { $0.collection == Roles.feedCollection }.map(\.id)
        #expect(feed == ["alice", "alice", "bob", "alice", "bob", "alice"], "\(feed)")
    }
}
