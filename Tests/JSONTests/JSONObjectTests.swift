import Foundation
import JSON
import Testing

/// `JSONObject` keeps insertion order and last-value-wins duplicates, and
/// stays linear however many keys it holds.
@Suite struct JSONObjectTests {
    /// Duplicate keys keep the first key's position and the last value, small or large.
    @Test(arguments: [3, 40])
    func duplicateKeysKeepFirstPositionLastValue(count: Int) throws {
        let members = (0..<count).map { #""k\#($0)":\#($0)"# }
        let text = "{" + members.joined(separator: ",") + #","k1":"again","k0":null}"#
        let object = try #require(try JSONParser.parse(text).objectValue)
        #expect(object.count == count)
        #expect(object.keys == (0..<count).map { "k\($0)" })
        #expect(object["k1"] == .string("again"))
        #expect(object["k0"] == .null)
        #expect(object["k\(count - 1)"] == .int(Int64(count - 1)))
    }

    enum Edit: Sendable { case set(String, Int?), prepend(String, Int) }

    /// Every edit against a plain ordered list, across the size where the index starts.
    @Test func editsMatchAPlainList() {
        var rng = SystemRandomNumberGenerator()
        var object = JSONObject()
        var model: [(key: String, value: JSONValue)] = []
        for _ in 0..<3_000 {
            let key = "k\(Int.random(in: 0..<40, using: &rng))"
            let value = Int.random(in: 0..<5, using: &rng)
            switch Int.random(in: 0..<10, using: &rng) {
            case 0..<6:
                object[key] = .int(Int64(value))
                if let i = model.firstIndex(where: { $0.key == key }) { model[i].value = .int(Int64(value)) } else { model.append((key, .int(Int64(value)))) }
            case 6..<9:
                object[key] = nil
                model.removeAll { $0.key == key }
            default:
                object.prepend(key, .int(Int64(value)))
                model.removeAll { $0.key == key }
                model.insert((key, .int(Int64(value))), at: 0)
            }
            #expect(object.keys == model.map(\.key))
            for m in model where object[m.key] != m.value { Issue.record("\(m.key): \(String(describing: object[m.key])) != \(m.value)") }
        }
    }

    static func parseTime(keys: Int) throws -> Double {
        let text = "{" + (0..<keys).map { #""key\#($0)":\#($0)"# }.joined(separator: ",") + "}"
        let start = cpuSeconds()
        let object = try #require(try JSONParser.parse(text).objectValue)
        #expect(object.count == keys)
        #expect(object["key\(keys - 1)"] == .int(Int64(keys - 1)))
        return cpuSeconds() - start
    }

    /// This thread's CPU time: steadier than the wall clock on a shared machine.
    static func cpuSeconds() -> Double {
        var t = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t)
        return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
    }

    @Test func parsingManyKeysIsLinear() throws {
        let small = try Self.parseTime(keys: 50_000)
        let large = try Self.parseTime(keys: 200_000)
        #expect(large < 2, "200k keys took \(large) s")
        // Quadratic would be 16x; allow noise from a shared machine.
        #expect(large < 10 * max(small, 0.01), "50k keys \(small) s, 200k keys \(large) s")
    }
}
