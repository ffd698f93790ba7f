import Foundation
import Store
import Testing

@Suite struct TimestampAndIDTests {
    @Test(arguments: [
        (0.0, "1970-01-01T00:00:00.000Z"),
        (1_795_000_000.125, "2026-11-18T11:06:40.125Z"),
        (951_782_400.75, "2000-02-29T00:00:00.750Z"),
        (-0.5, "1969-12-31T23:59:59.500Z"),
        (253_402_300_799.5, "9999-12-31T23:59:59.500Z"),
    ])
    func formatsISO8601WithMilliseconds(seconds: Double, expected: String) {
        #expect(Timestamp.format(Date(timeIntervalSince1970: seconds)) == expected)
    }

    @Test func idsAreTwentyFourHexDigitsUniqueAndTimeOrdered() {
        let ids = DocumentID()
        let made = (0..<1000).map { _ in ids.next() }
        #expect(Set(made).count == made.count)
        for id in made {
            #expect(id.utf8.count == 24)
            #expect(id.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) })
        }
        let seconds = UInt32(made[0].prefix(8), radix: 16).map(Double.init) ?? 0
        #expect(abs(seconds - Date().timeIntervalSince1970) < 5)
        // No counter: consecutive ids' last 16 digits are far apart, none shared by all.
        let suffixes = made.map { UInt64($0.dropFirst(8), radix: 16) ?? 0 }
        let close = zip(suffixes, suffixes.dropFirst()).filter { a, b in (a > b ? a - b : b - a) < 1 << 32 }
        #expect(close.isEmpty)
        #expect(Set(made.map { $0.dropFirst(8).prefix(10) }).count == made.count)
    }
}
