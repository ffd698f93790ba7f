import Foundation
import JSON
import Logging
import Store
@testable import StorePostgres
import Testing

/// Declared references on PostgreSQL: the same script against both engines
/// gives the same answers, errors and `_refs`; two nodes racing a reference
/// against a delete of its target never leave it dangling.
@Suite("PostgreSQL engine: references")
struct PostgresReferencesTests {
    static let schema = ReferenceSchema([
        .init(collection: "catches", field: "spot", target: "spots", onDelete: .restrict),
        .init(collection: "catches", field: "also", target: "spots", onDelete: .nullify),
        .init(collection: "notes", field: "about", target: "secrets", onDelete: .cascade),
    ], scope: { principal, roles, collection in AccessScope(principal: principal, level: collection == "secrets" ? .private : .public, roles: roles) })

    static func ref(_ id: String, _ collection: String = "spots") -> String {
        #"{"_type":"ref","_collection":"\#(collection)","_id":"\#(id)"}"#
    }

    static let alice = AccessScope(principal: .user("alice"), level: .private)
    static let bob = AccessScope(principal: .user("bob"), level: .private)

    /// Every step's outcome, as text, on one engine.
    static func script(_ w: any DocumentWriting, _ r: any DocumentReading) -> [String] {
        var log: [String] = []
        func step<T>(_ name: String, _ result: Result<T, any Error>) { log.append("\(name): \(outcome(result))") }
        func counts(_ id: String) {
            log.append("counts \(id): " + outcome({ try w.referrerCounts(to: "spots", id: id) }) { $0.map { "\($0.collection).\($0.field)=\($0.count)" }.joined(separator: " ") })
            log.append("referrers \(id): " + outcome({ try w.referrers(to: "spots", id: id, from: "catches", field: "spot") }))
        }
        for id in ["a", "b", "c"] { step("spot \(id)", w.one { try $0.insert(into: "spots", object(#"{"_id":"\#(id)"}"#), scope: .system) }) }
        // Stored before the declaration: indexed by applyReferences, its dangling target reported.
        step("pre", w.one { try $0.insert(into: "catches", object(#"{"_id":"pre","spot":[\#(ref("a")),\#(ref("zz"))],"also":"junk"}"#), scope: .system) })
        log.append("dangling before: " + outcome({ try r.danglingReferences(schema) }))
        step("apply", Result { try w.applyReferences(schema) })
        counts("a")
        step("c1", w.one { try $0.insert(into: "catches", object(#"{"_id":"c1","spot":\#(ref("a"))}"#), scope: .system) })
        step("c2", w.one { try $0.insert(into: "catches", object(#"{"_id":"c2","spot":[\#(ref("a")),\#(ref("b"))],"also":\#(ref("c"))}"#), scope: .system) })
        step("c3 missing", w.one { try $0.insert(into: "catches", object(#"{"_id":"c3","spot":\#(ref("missing"))}"#), scope: .system) })
        step("c4 shape", w.one { try $0.insert(into: "catches", object(#"{"_id":"c4","spot":"a"}"#), scope: .system) })
        step("c5 other collection", w.one { try $0.insert(into: "catches", object(#"{"_id":"c5","spot":\#(ref("a", "secrets"))}"#), scope: .system) })
        counts("a"); counts("b")
        step("delete a", w.one { try $0.delete(from: "spots", id: "a", scope: .system) })
        step("patch c2", w.one { try $0.patch(in: "catches", id: "c2", object(#"{"spot":[\#(ref("b"))]}"#), scope: .system) })
        step("replace c1", w.one { try $0.replace(in: "catches", id: "c1", object(#"{"spot":null,"n":1}"#), scope: .system) })
        counts("a"); counts("b")
        step("cascade a", w.one { w in try w.deferringReferenceChecks { try w.delete(from: "spots", id: "a", scope: .system); try w.delete(from: "catches", id: "pre", scope: .system) } })
        step("cascade b refused", w.one { w in try w.deferringReferenceChecks { try w.delete(from: "spots", id: "b", scope: .system) } })
        step("spot a gone", Result { try w.document(in: "spots", id: "a") })
        step("spot b kept", Result { try w.document(in: "spots", id: "b") })
        // A target the writer may not read is refused exactly like a missing one.
        step("secret s1", w.one { try $0.insert(into: "secrets", object(#"{"_id":"bob:s1"}"#), scope: bob) })
        step("alice's note", w.one { try $0.insert(into: "notes", object(#"{"_id":"n1","about":\#(ref("bob:s1", "secrets"))}"#), scope: .system.with(alice)) })
        step("bob's note", w.one { try $0.insert(into: "notes", object(#"{"_id":"n2","about":\#(ref("bob:s1", "secrets"))}"#), scope: .system.with(bob)) })
        // The row methods: PUT's replaceable row, the existing-row variants.
        step("alice sees s1", Result { try w.existingRow(in: "secrets", id: "bob:s1", scope: alice) != nil })
        step("alice puts s1", w.one { try $0.replace(in: "secrets", id: "bob:s1", object(#"{"x":1}"#), scope: alice) })
        step("alice puts a foreign id", w.one { try $0.replaceableRow(in: "secrets", id: "free", scope: alice) != nil })
        step("alice puts her own", w.one { try $0.replace(in: "secrets", id: "alice:1", object(#"{"x":1}"#), scope: alice) })
        step("bob replaces s1 as read", w.one { w in try w.replace(in: "secrets", id: "bob:s1", object(#"{"y":2}"#), existing: try w.existingRow(in: "secrets", id: "bob:s1", scope: bob), scope: bob) })
        step("bob patches s1 as read", w.one { w in try w.patch(in: "secrets", id: "bob:s1", object(#"{"z":3}"#), existing: try w.existingRow(in: "secrets", id: "bob:s1", scope: bob), scope: bob) })
        step("alice patches s1", w.one { try $0.patch(in: "secrets", id: "bob:s1", object(#"{"z":4}"#), scope: alice) })
        step("bob deletes s1 (referenced)", w.one { w in try w.delete(from: "secrets", id: "bob:s1", existing: try w.existingRow(in: "secrets", id: "bob:s1", scope: bob), scope: bob) })
        step("delete nothing", w.one { try $0.delete(from: "secrets", id: "nope", existing: nil, scope: .system) })
        step("patch nothing", w.one { try $0.patch(in: "catches", id: "nope", object("{}"), existing: nil, scope: .system) })
        step("put over nothing", w.one { try $0.replace(in: "fresh", id: "f1", object(#"{"q":1}"#), existing: nil, scope: .system) })
        step("s1 now", Result { try w.document(in: "secrets", id: "bob:s1") })
        log.append("dangling writer: " + outcome({ try w.danglingReferences() }))
        log.append("dangling reader: " + outcome({ try r.danglingReferences(schema) }))
        step("undeclare", Result { try w.applyReferences(ReferenceSchema([])) })
        counts("b")
        return log
    }

    @Test("the same writes give the same answers, errors and _refs on both engines")
    func differential() throws {
        let expected = try expectSameOnBothEngines(Self.script)
        #expect(expected.contains { $0.hasPrefix("delete a: StoreError") }, "the script exercises a refused delete: \(expected)")
    }

    @Test("a reference set on one node and a delete of its target on another: whichever commits first wins, nothing dangles")
    func raceAcrossNodes() throws {
        let store = try PGTestStore()
        try store.writer.applyReferences(Self.schema)
        let other = try PostgresDocumentWriter(url: store.url, ids: DocumentID(), logger: Logger(label: "b"))
        try other.applyReferences(Self.schema)
        try store.insert("spots", [#"{"_id":"t1"}"#, #"{"_id":"t2"}"#])
        // The reference's batch commits first: the delete waits for it, then finds the reference.
        let first = try Self.holdOpen(store.writer, { try $0.insert(into: "catches", object(#"{"_id":"x","spot":\#(Self.ref("t1"))}"#), scope: .system) },
                                      while: other, { try $0.delete(from: "spots", id: "t1", scope: .system) })
        #expect((try? first.held.get()) != nil)
        #expect(Self.storeError(first.other).map { "\($0)" }?.contains("still referenced") == true, "expected a conflict, got \(first.other)")
        // The delete commits first: the reference waits for it, then finds no target.
        let second = try Self.holdOpen(other, { try $0.delete(from: "spots", id: "t2", scope: .system) },
                                       while: store.writer, { try $0.insert(into: "catches", object(#"{"_id":"y","spot":\#(Self.ref("t2"))}"#), scope: .system) })
        #expect((try? second.held.get()) != nil)
        #expect(Self.storeError(second.other).map { "\($0)" }?.contains("no document with _id") == true, "expected a 400, got \(second.other)")
        #expect(try store.writer.danglingReferences().isEmpty)
        #expect(try store.writer.document(in: "spots", id: "t1") != nil && store.writer.document(in: "spots", id: "t2") == nil)
    }

    static func storeError(_ result: Result<Any, any Error>) -> StoreError? {
        guard case .failure(let error) = result else { return nil }
        return error as? StoreError
    }

    /// Runs `held` on `a` and keeps its batch open until `other` has run on
    /// `b` for a while (it must wait), then lets `a` commit.
    static func holdOpen(_ a: PostgresDocumentWriter, _ held: @escaping (PostgresDocumentWriter) throws -> Any,
                         while b: PostgresDocumentWriter, _ other: @escaping (PostgresDocumentWriter) throws -> Any) throws
        -> (held: Result<Any, any Error>, other: Result<Any, any Error>) {
        let reached = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0), done = DispatchSemaphore(value: 0)
        let results = Shared((held: Result<Any, any Error>.failure(StoreError.invalid("not run")), other: Result<Any, any Error>.failure(StoreError.invalid("not run"))))
        let (writerA, writerB, heldOp, otherOp) = (HandOver(a), HandOver(b), HandOver(held), HandOver(other))
        a.beforeCommit = { reached.signal(); release.wait() }
        defer { a.beforeCommit = nil }
        Thread { results.value.held = writerA.value.commitBatch([heldOp.value])[0]; done.signal() }.start()
        reached.wait()
        let otherDone = DispatchSemaphore(value: 0)
        Thread { results.value.other = writerB.value.commitBatch([otherOp.value])[0]; otherDone.signal() }.start()
        let waited = otherDone.wait(timeout: .now() + 0.5) == .timedOut
        release.signal()
        done.wait()
        otherDone.wait()
        #expect(waited, "the other node's write did not wait for the open transaction")
        return results.value
    }
}

extension AccessScope {
    /// `other`'s principal at the public level (a writer naming targets in another collection).
    func with(_ other: AccessScope) -> AccessScope { AccessScope(principal: other.principal, level: .public) }
}
