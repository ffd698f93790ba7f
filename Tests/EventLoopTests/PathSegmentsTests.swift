@testable import EventLoop
import Testing

/// How a request path becomes the router's segments.
@Suite struct PathSegmentsTests {
    @Test(arguments: [
        ("/", []),
        ("", []),
        ("/items", ["items"]),
        ("/items/abc", ["items", "abc"]),
        ("//items//abc/", ["items", "abc"]),
        ("/files/6b02/thumbnail", ["files", "6b02", "thumbnail"]),
        ("/a%20b/c%2Fd", ["a b", "c/d"]),
        ("/caf%C3%A9/%", ["café", "%"]),
        ("/é/x", ["é", "x"]),
    ] as [(String, [String])])
    func segments(path: String, expected: [String]) {
        #expect(HTTPServer.segments(path) == expected)
    }
}
