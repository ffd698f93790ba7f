import HTTP
import JSON

/// `GET /admin/routes` (admin credential): every route of the table, as
/// declared, with the methods it answers. `openapi.yaml` is checked against
/// this list in both directions (`tests/python/test_openapi.py`), so the spec
/// cannot leave out a route or describe one the daemon does not serve.
enum RouteListing {
    static let template = "/admin/routes"

    /// The listing as JSON: `[{"template", "methods", "anyMethod"}]`, in
    /// declaration order, this route included.
    static func json(_ routes: [RoostRoute]) -> String {
        let own = RoostRoute(template, [.get: Router.noEndpoint])
        return JSONValue.array((routes + [own]).map { route in
            var o = JSONObject()
            o["template"] = .string(route.template)
            o["methods"] = .array(route.methods.map { .string($0.rawValue) })
            o["anyMethod"] = .bool(route.answersAnyMethod)
            return .object(o)
        }).jsonText
    }
}
