@testable import Roost
import Logging
import Testing

/// Services start in the declared order and stop in reverse; a failed start
/// stops the ones already started, in reverse, and nothing after it starts.
@Suite struct ServiceListTests {
    struct Refused: Error {}

    final class Journal: @unchecked Sendable { var lines: [String] = [] }

    struct Case: Sendable, CustomStringConvertible {
        let description: String
        /// The service whose start throws, if any.
        let failing: String?
        let expected: [String]
    }

    static let names = ["pools", "hooks", "scripts", "live"]

    static let cases: [Case] = [
        Case(description: "all start, then all stop in reverse", failing: nil,
             expected: ["start pools", "start hooks", "start scripts", "start live", "stop live", "stop scripts", "stop hooks", "stop pools"]),
        Case(description: "a middle failure stops the started ones in reverse", failing: "scripts",
             expected: ["start pools", "start hooks", "start scripts", "stop hooks", "stop pools"]),
        Case(description: "a first failure stops nothing", failing: "pools", expected: ["start pools"]),
        Case(description: "a last failure stops all the others", failing: "live",
             expected: ["start pools", "start hooks", "start scripts", "start live", "stop scripts", "stop hooks", "stop pools"]),
    ]

    @Test(arguments: cases)
    func order(_ c: Case) {
        let journal = Journal()
        var logger = Logger(label: "service-list-test")
        logger.logLevel = .critical
        let list = ServiceList(Self.names.map { name in
            ServiceStep(name, start: {
                journal.lines.append("start \(name)")
                if name == c.failing { throw Refused() }
            }, stop: { journal.lines.append("stop \(name)") })
        }, logger: logger)
        let failed = (try? list.start()) == nil
        #expect(failed == (c.failing != nil))
        if !failed { list.stop() }
        // A second stop stops nothing again.
        list.stop()
        #expect(journal.lines == c.expected)
    }
}
