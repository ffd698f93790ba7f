import HTTP
import Hooks
import Testing

/// A refusal's status and code: built-in ones come from `ErrorCode`; a
/// script's own code is a word at a 4xx status, and one of Roost's codes
/// only at the status it is declared with.
@Suite struct HookRefusalTests {
    @Test func builtInRefusalTakesItsCodesStatus() {
        for code in ErrorCode.allCases {
            let refusal = HookRefusal(code, "no")
            #expect(refusal.status == code.status && refusal.code == code.rawValue)
        }
    }

    struct Case: Sendable, CustomStringConvertible {
        let status: Int
        let code: String
        /// A word of the expected problem; nil when accepted.
        let problem: String?
        var description: String { "\(status) \(code)" }
    }

    static let cases: [Case] = [
        Case(status: 422, code: "OutOfStock", problem: nil),
        Case(status: 400, code: "InvalidDocument", problem: nil),
        Case(status: 409, code: "Conflict", problem: nil),
        Case(status: 404, code: "not_here-2", problem: nil),
        Case(status: 422, code: "InvalidDocument", problem: "status 400"),
        Case(status: 400, code: "Forbidden", problem: "status 403"),
        Case(status: 500, code: "OutOfStock", problem: "400 to 499"),
        Case(status: 399, code: "OutOfStock", problem: "400 to 499"),
        Case(status: 400, code: "", problem: "letters"),
        Case(status: 400, code: "Out of stock", problem: "letters"),
        Case(status: 400, code: "Ünicode", problem: "letters"),
        Case(status: 400, code: String(repeating: "A", count: 65), problem: "letters"),
    ]

    @Test(arguments: cases)
    func appCodes(_ c: Case) {
        let problem = HookRefusal.appCodeProblem(status: c.status, code: c.code)
        if let expected = c.problem {
            #expect(problem?.contains(expected) == true, "\(String(describing: problem))")
        } else {
            #expect(problem == nil)
            let refusal = HookRefusal(status: c.status, appCode: c.code, "no")
            #expect(refusal.status == c.status && refusal.code == c.code)
        }
    }
}
