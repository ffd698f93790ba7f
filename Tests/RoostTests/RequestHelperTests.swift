@testable import Roost
import HTTP
import Store
import Testing

/// Pure helpers that handlers rely on: `Range` headers and list parameters.
@Suite struct RequestHelperTests {
    static let ranges: [(String, Int, FileResponse.RangeRequest)] = [
        ("bytes=0-9", 100, .bytes(0, 9)),
        ("bytes=90-", 100, .bytes(90, 99)),
        ("bytes=-10", 100, .bytes(90, 99)),
        ("bytes=-1000", 100, .bytes(0, 99)),
        ("bytes=50-5000", 100, .bytes(50, 99)),
        ("bytes=100-", 100, .unsatisfiable),
        ("bytes=-0", 100, .unsatisfiable),
        ("bytes=0-", 0, .unsatisfiable),
        ("bytes=9-0", 100, .whole),
        ("bytes=0-1,5-6", 100, .whole),
        ("items=0-9", 100, .whole),
        ("bytes=a-b", 100, .whole),
        ("BYTES= 1-2 ", 100, .bytes(1, 2)),
    ]

    @Test(arguments: ranges)
    func range(header: String, size: Int, expected: FileResponse.RangeRequest) {
        #expect(FileResponse.parseRange(header, size: size) == expected)
    }

    static func request(_ query: [String: String]) -> Request {
        Request(method: .get, path: "/items", segments: ["items"], query: query, headers: Headers(), body: [], requestID: "t")
    }

    @Test func listDefaults() throws {
        let find = try ListParameters.find(Self.request([:]))
        #expect(find.limit == FindQuery.defaultLimit && find.skip == 0 && find.fields == nil && find.after == nil)
    }

    @Test func listParametersAreRead() throws {
        let find = try ListParameters.find(Self.request(["limit": "5", "skip": "10", "fields": "a, b", "sort": #"{"a":-1}"#]))
        #expect(find.limit == 5 && find.skip == 10 && find.fields == ["a", "b"])
        #expect(find.sort.map(\.field) == ["a"] && find.sort.first?.ascending == false)
        #expect(try ListParameters.find(Self.request(["limit": "0"])).limit == FindQuery.defaultLimit)
    }

    @Test(arguments: [
        ["limit": "-1"], ["limit": "1001"], ["limit": "x"], ["skip": "-3"], ["query": "{"], ["sort": "nope"],
        ["fields": "a.b"], ["fields": "$x"], ["after": "k", "skip": "2"],
    ] as [[String: String]])
    func badListParametersAre400(query: [String: String]) {
        #expect(throws: HTTPError.self) { try ListParameters.find(Self.request(query)) }
        do { _ = try ListParameters.find(Self.request(query)) } catch let e as HTTPError {
            #expect(e.status == 400 && e.code == "InvalidQuery")
        } catch { Issue.record("unexpected \(error)") }
    }

    @Test(arguments: [(nil, false), ("true", true), ("1", true), ("false", false), ("0", false)] as [(String?, Bool)])
    func explain(value: String?, expected: Bool) throws {
        #expect(try ListParameters.wantsExplain(Self.request(value.map { ["explain": $0] } ?? [:])) == expected)
    }
}
