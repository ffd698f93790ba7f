@testable import Roost
import Store
import Testing

/// Streams share a `LiveView` (one access decision per change for all of
/// them) only when every change makes the same event for each: the same
/// caller, the same roles, the same topics. Anything else that may change
/// what a stream sees must give another view.
@Suite struct LiveViewTests {
    private static func key(_ principal: AccessScope.Principal, roles: [String] = [], _ subscribe: String) throws -> String {
        LiveView.key(principal: principal, roles: roles, subscription: try LiveSubscription.parse(subscribe: subscribe))
    }

    static let items = #"[{"collection":"items"}]"#
    static let itemsFiltered = #"[{"collection":"items","query":{"n":{"$gte":1}}}]"#

    @Test func theSameCallerAndTopicsShareAView() throws {
        #expect(try Self.key(.anonymous, Self.items) == Self.key(.anonymous, Self.items))
        #expect(try Self.key(.user("u1"), roles: ["staff"], Self.itemsFiltered)
                == Self.key(.user("u1"), roles: ["staff"], Self.itemsFiltered))
    }

    @Test func anythingThatChangesWhatAStreamSeesMakesAnotherView() throws {
        let keys = try [
            Self.key(.anonymous, Self.items),
            Self.key(.admin, Self.items),
            Self.key(.user("u1"), Self.items),
            Self.key(.user("u2"), Self.items),
            Self.key(.user("u1"), roles: ["staff"], Self.items),
            Self.key(.user("u1"), roles: ["staff", "editor"], Self.items),
            Self.key(.anonymous, Self.itemsFiltered),
            Self.key(.anonymous, #"[{"collection":"other"}]"#),
            Self.key(.anonymous, #"[{"collection":"items"},{"collection":"other"}]"#),
        ]
        #expect(Set(keys).count == keys.count, "two different callers or subscriptions share a view: \(keys)")
    }

    @Test func rolesCountOnlyForSignedInUsers() throws {
        // AccessScope drops the roles of anonymous callers and the admin, so their views do too.
        #expect(try Self.key(.anonymous, roles: ["staff"], Self.items) == Self.key(.anonymous, Self.items))
    }
}
