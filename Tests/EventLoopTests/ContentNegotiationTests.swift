import HTTP
import Testing

@Suite struct ContentNegotiationTests {
    @Test(arguments: [
        ("application/json", "application/json"),
        ("application/json; charset=utf-8", "application/json"),
        ("Application/JSON;charset=UTF-8", "application/json"),
        ("  text/html ; q=1", "text/html"),
        ("\timage/png", "image/png"),
        ("application/merge-patch+json", "application/merge-patch+json"),
    ])
    func mediaTypeDropsParametersSpacesAndCase(header: String, expected: String) {
        #expect(ContentNegotiation.mediaType(header) == expected)
    }

    @Test func noHeaderHasNoMediaType() {
        #expect(ContentNegotiation.mediaType(nil) == nil)
        #expect(ContentNegotiation.mediaType("") == nil)
    }

    @Test(arguments: [
        ("text/html,application/xhtml+xml,*/*;q=0.8", true),
        ("application/json", false),
        ("*/*", false),
        ("text/html;q=0.5, application/json;q=0.9", false),
        (nil as String?, false),
    ])
    func htmlOnlyWhenRatedAboveJSON(accept: String?, expected: Bool) {
        #expect(ContentNegotiation.prefersHTML(accept) == expected)
    }
}
