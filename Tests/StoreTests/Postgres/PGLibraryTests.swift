import Foundation
@testable import StorePostgres
import Testing
import XCTest

/// libpq is loaded at the first connection (`CPostgresShim`). Loading
/// happens once per process, so the failure is checked in a child process
/// (this test binary again, running `PGLibraryChildTests` alone) whose
/// `ROOST_LIBPQ` names a library that does not exist.
@Suite("PostgreSQL engine: libpq loaded lazily")
struct PGLibraryTests {
    @Test("without libpq the first connection is a PGError naming the library, not a crash")
    func missingLibrary() throws {
        let child = Process()
        child.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        child.arguments = ["StoreTests.PGLibraryChildTests/testConnectingWithoutLibpq"]
        var environment = ProcessInfo.processInfo.environment
        environment["ROOST_LIBPQ"] = "libpq-not-installed.so.5"
        environment[PGLibraryChildTests.marker] = "1"
        child.environment = environment
        let output = Pipe()
        child.standardOutput = output
        child.standardError = output
        try child.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        child.waitUntilExit()
        #expect(child.terminationReason == .exit && child.terminationStatus == 0, "\(text)")
        #expect(text.contains("Executed 1 test, with 0 failures"), "the child did not run its test: \(text)")
        #expect(!text.contains("skipped"), "\(text)")
    }
}

/// The child's half of `PGLibraryTests`: skipped unless that test started it.
final class PGLibraryChildTests: XCTestCase {
    static let marker = "ROOST_PGLIBRARY_CHILD"

    func testConnectingWithoutLibpq() throws {
        guard ProcessInfo.processInfo.environment[Self.marker] == "1" else {
            throw XCTSkip("runs only as the child process of PGLibraryTests")
        }
        for _ in 0..<2 {
            do {
                _ = try PGConnection(url: "postgres://127.0.0.1:1/none")
                XCTFail("connected without libpq")
            } catch let error as PGError {
                XCTAssertTrue(error.message.contains("libpq cannot be loaded"), error.message)
                XCTAssertTrue(error.message.contains("libpq-not-installed.so.5"), error.message)
            }
        }
    }
}
