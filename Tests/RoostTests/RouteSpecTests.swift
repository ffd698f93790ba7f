@testable import Roost
import HTTP
import Testing

/// The route table and the served `openapi.yaml` agree: every operation the
/// spec describes is a route of the same template that answers its method.
@Suite struct RouteSpecTests {
    /// `(template, method)` for each operation in the spec, e.g. `("/users/{id}", .put)`.
    static func operations() -> [(String, Request.Method)] {
        var result: [(String, Request.Method)] = []
        var path: String?
        for line in OpenAPIDocument.text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("  /"), line.hasSuffix(":") {
                path = String(line.dropFirst(2).dropLast())
            } else if line.hasPrefix("  "), !line.hasPrefix("   "), !line.hasPrefix("  /") {
                path = nil
            } else if let p = path, line.hasPrefix("    "), !line.hasPrefix("     "), line.hasSuffix(":"),
                      let method = Request.Method(rawValue: line.dropFirst(4).dropLast().uppercased()) {
                result.append((p, method))
            } else if !line.hasPrefix(" "), !line.isEmpty {
                path = nil
            }
        }
        return result
    }

    @Test func everyDescribedOperationIsRouted() {
        let operations = Self.operations()
        #expect(operations.count > 25, "the spec's paths were not found")
        let table = RouterFixture.shared.router.table
        for (template, method) in operations {
            // A concrete path for the template: `{collection}` → items, `{id}` → x1.
            let segments = template.split(separator: "/").map { $0 == "{collection}" ? "items" : $0.hasPrefix("{") ? "x1" : String($0) }
            let route = table.match(segments).route
            let routed = route?.template.split(separator: "/").map { $0.hasPrefix(":") ? "{\($0.dropFirst())}" : String($0) }
            #expect(routed == template.split(separator: "/").map(String.init), "\(method.rawValue) \(template) → \(route?.template ?? "nothing")")
            #expect(route?.handler(for: method) != nil, "\(method.rawValue) \(template) has no handler")
        }
    }
}
