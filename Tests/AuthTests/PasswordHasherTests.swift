import Auth
import Testing

/// The decoy hash: shaped like a real hash of the same cost, matched by no password.
@Suite struct PasswordHasherTests {
    /// A hash string up to its salt: `$argon2id$v=19$m=…,t=…,p=1`.
    static func parameters(_ hash: String) -> String {
        hash.split(separator: "$").prefix(3).joined(separator: "$")
    }

    @Test(arguments: [
        (PasswordHasher.Cost.owasp, "argon2id$v=19$m=19456,t=2,p=1", 19 << 20),
        (.interactive, "argon2id$v=19$m=65536,t=2,p=1", 64 << 20),
    ])
    func decoyHasTheCostsParameters(cost: PasswordHasher.Cost, parameters: String, memory: Int) {
        let hasher = PasswordHasher(cost: cost)
        let real = hasher.hash("a password")!
        let decoy = hasher.decoyHash()
        #expect(Self.parameters(real) == parameters)
        #expect(Self.parameters(decoy) == parameters)
        #expect(decoy.count == real.count)
        #expect(hasher.memLimit == memory)
        #expect(hasher.verify("a password", against: real))
        #expect(!hasher.verify("a password", against: decoy))
        #expect(!hasher.verify("", against: decoy))
        #expect(decoy != hasher.decoyHash())
    }

    @Test func hashesOfAnotherCostStillVerify() {
        let old = PasswordHasher(cost: .interactive).hash("kept")!
        #expect(PasswordHasher(cost: .owasp).verify("kept", against: old))
        #expect(!PasswordHasher(cost: .owasp).verify("other", against: old))
    }
}
