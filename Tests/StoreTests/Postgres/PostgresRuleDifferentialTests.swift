import JSON
import RoostTestSupport
import Store
@testable import StorePostgres
import Testing

/// `RuleDifferentialTests` on PostgreSQL: its rendering of random read rules
/// admits exactly the rows the in-memory matcher admits.
@Suite("PostgreSQL engine: access rules agree with the in-memory matcher")
struct PostgresRuleDifferentialTests {
    @Test("random rules × callers × documents", arguments: [UInt64(35), 3_500])
    func agree(seed: UInt64) throws {
        let store = try PGTestStore()
        try store.users(RuleCaseGenerator.users)
        try store.roles(RuleCaseGenerator.roles)
        var generator = RuleCaseGenerator(rng: SeededGenerator(seed: seed))
        let compared = try RuleDifferential.run(&generator, insert: { creator, body in
            let scope = creator.map { AccessScope(principal: .user($0), level: .public) } ?? .system
            try store.insert("c", [body], scope: scope)
        }, reader: store.reader)
        #expect(compared.pairs >= 40)
    }
}
