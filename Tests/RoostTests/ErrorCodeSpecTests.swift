@testable import Roost
import HTTP
import Testing
import Yams

/// `ErrorCode` (declared once, with each code's status) and `openapi.yaml`
/// agree: the `Error` schema lists exactly the codes Roost answers, in the
/// enum's order, and every code's status is one some operation documents
/// (or the spec's description names it as one any request may get).
@Suite struct ErrorCodeSpecTests {
    nonisolated(unsafe) static let spec: [String: Any] = (try? Yams.load(yaml: OpenAPIDocument.text) as? [String: Any]) ?? [:]

    static var specCodes: [String] {
        let schemas = (spec["components"] as? [String: Any])?["schemas"] as? [String: Any]
        let error = ((schemas?["Error"] as? [String: Any])?["properties"] as? [String: Any])?["error"] as? [String: Any]
        return error?["enum"] as? [String] ?? []
    }

    @Test func theSpecListsExactlyTheDeclaredCodes() {
        #expect(Self.specCodes == ErrorCode.allCases.map(\.rawValue))
    }

    @Test func everyCodesStatusIsDocumented() {
        var statuses = Set<String>()
        for case let item as [String: Any] in ((Self.spec["paths"] as? [String: Any]) ?? [:]).values {
            for case let op as [String: Any] in item.values {
                for key in (op["responses"] as? [String: Any] ?? [:]).keys { statuses.insert(key) }
            }
        }
        // Codes any request may get are named in the spec's description instead.
        let description = (Self.spec["info"] as? [String: Any])?["description"] as? String ?? ""
        for code in ErrorCode.allCases {
            #expect(statuses.contains(String(code.status)) || description.contains("\(code.status) `\(code.rawValue)`"),
                    "\(code.rawValue): no operation documents \(code.status)")
        }
    }

    @Test(arguments: ErrorCode.allCases)
    func anErrorAnswersItsCodesStatus(code: ErrorCode) {
        let response = HTTPError(code, "x").response
        #expect(response.status == code.status)
        #expect(String(decoding: response.body, as: UTF8.self).contains("\"error\":\"\(code.rawValue)\""))
    }
}
