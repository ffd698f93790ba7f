@testable import Store
import Testing

/// Signatures under a sub-key of the database's cursor key (signed file URLs).
@Suite struct CursorSealSigningTests {
    static let seal = CursorSeal(key: Array(0..<32))
    static let other = CursorSeal(key: Array(1...32))

    @Test("a signature verifies for its message and purpose only")
    func verifies() {
        let sig = Self.seal.signature("file\noriginal\n100", purpose: "file-url-v1")
        #expect(sig.count == 43 && Base64URL.decode(sig)?.count == 32)
        #expect(Self.seal.verifies(sig, "file\noriginal\n100", purpose: "file-url-v1"))
        #expect(Self.seal.signature("file\noriginal\n100", purpose: "file-url-v1") == sig, "deterministic")
    }

    enum Change: String, CaseIterable, Sendable { case none, flipFirst, cut, doubled, empty, garbage }

    static func apply(_ change: Change, _ s: String) -> String {
        switch change {
        case .none: return s
        case .flipFirst: return (s.first == "A" ? "B" : "A") + s.dropFirst()
        case .cut: return String(s.dropLast(2))
        case .doubled: return s + s
        case .empty: return ""
        case .garbage: return "not base64 !!"
        }
    }

    @Test("refused: another message, purpose or key, any changed or cut signature, and what is no signature", arguments: [
        ("file\noriginal\n101", "file-url-v1", false, Change.none),
        ("file\nthumbnail/128\n100", "file-url-v1", false, .none),
        ("file\noriginal\n100", "other-purpose", false, .none),
        ("file\noriginal\n100", "file-url-v1", true, .none),
    ] + Change.allCases.dropFirst().map { ("file\noriginal\n100", "file-url-v1", false, $0) })
    func refusals(message: String, purpose: String, otherKey: Bool, change: Change) {
        let sig = Self.apply(change, Self.seal.signature("file\noriginal\n100", purpose: "file-url-v1"))
        #expect(!(otherKey ? Self.other : Self.seal).verifies(sig, message, purpose: purpose))
    }

    @Test("the sub-key is neither the cursor key nor another purpose's")
    func subkeys() {
        let a = Self.seal.subkey("file-url-v1"), b = Self.seal.subkey("other")
        #expect(a.count == 32 && a != b && a != Self.seal.key)
    }
}
