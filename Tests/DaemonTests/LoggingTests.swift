import Foundation
import Logging
import Testing
@testable import Daemon

@Suite struct LoggingTests {
    @Test func levelBoxIsSharedAndChangeable() {
        let box = LogLevelBox(.info)
        #expect(box.allows(.info) && box.allows(.error) && !box.allows(.debug))
        #expect(box.set(.warning) == .info)
        #expect(!box.allows(.notice) && box.allows(.warning))
        var handler = DaemonLogHandler(label: "t", sink: StderrLogSink(fd: -1), level: box)
        #expect(handler.logLevel == .warning)
        handler.logLevel = .trace
        #expect(box.level == .trace)
    }

    @Test func journalFieldNames() {
        #expect(LogFormat.journalName("request_id") == "REQUEST_ID")
        #expect(LogFormat.journalName("http.method") == "HTTP_METHOD")
        #expect(LogFormat.journalName("_hidden") == "F_HIDDEN")
        #expect(LogFormat.journalName("9lives") == "F9LIVES")
        #expect(LogFormat.journalName(String(repeating: "a", count: 100)).utf8.count == 64)
    }

    @Test func prioritiesFollowSyslog() {
        #expect([Logger.Level.trace, .debug, .info, .notice, .warning, .error, .critical].map(LogFormat.priority)
                == ["7", "7", "6", "5", "4", "3", "2"])
    }

    @Test func millisecondsHaveThreeDecimals() {
        #expect(LogFormat.milliseconds(0) == "0.000")
        #expect(LogFormat.milliseconds(1_234_567) == "1.235")
        #expect(LogFormat.milliseconds(12_005_000) == "12.005")
        #expect(LogFormat.milliseconds(999) == "0.001")
    }

    /// Reads what a sink wrote through a pipe.
    private func captured(_ write: (StderrLogSink) -> Void) -> String {
        var fds: [Int32] = [0, 0]
        pipe(&fds)
        let sink = StderrLogSink(fd: fds[1])
        write(sink)
        sink.flushAccess()
        close(fds[1])
        var data = [UInt8](repeating: 0, count: 4096)
        let n = read(fds[0], &data, data.count)
        close(fds[0])
        return String(decoding: data.prefix(max(0, n)), as: UTF8.self)
    }

    @Test func stderrLinesAreReadableAndOneLineEach() throws {
        let line = captured {
            $0.write(level: .warning, label: "roostd", message: "two\nlines", fields: [("a", "1"), ("b", "has space")],
                     file: "f", function: "g", line: 1)
        }
        let pattern = #/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z warning roostd: two lines a=1 b="has space"\n$/#
        #expect(line.wholeMatch(of: pattern) != nil, "\(line)")
    }

    @Test func accessLinesCarryRequestIDAndDuration() {
        let line = captured {
            $0.writeAccess(AccessEntry(method: "GET", path: "/items/x\u{1B}y", route: "/:collection/:id", status: 404,
                                       durationNanoseconds: 2_500_000, requestID: "rid-1", remoteAddress: "127.0.0.1"))
        }
        #expect(line.hasSuffix(" info roostd: GET /items/x y 404 2.500ms request_id=rid-1 remote=127.0.0.1\n"), "\(line)")
    }

    /// Client-controlled values (issue 33): nothing but printable ASCII other than `"` and `\` stays.
    @Test(arguments: [
        ("/items/plain-id_1.~", "/items/plain-id_1.~"),
        ("/a b", "/a\\x20b"),
        ("/a\"b\\c", "/a\\x22b\\x5Cc"),
        ("/x\r\n2026-01-01 info roostd: GET / 200", "/x\\x0D\\x0A2026-01-01\\x20info\\x20roostd:\\x20GET\\x20/\\x20200"),
        ("/nul\u{0}\u{7F}", "/nul\\x00\\x7F"),
        ("/é\u{FFFD}", "/\\xC3\\xA9\\xEF\\xBF\\xBD"),
    ])
    func clientValuesAreEscaped(raw: String, logged: String) {
        #expect(LogFormat.escaped(raw) == logged)
    }

    @Test func fieldValuesCannotEndTheLineOrForgeAField() {
        let line = captured {
            $0.write(level: .info, label: "roostd", message: "m",
                     fields: [("a", "x\r\n2026 info roostd: forged"), ("b", "q\"uote\\"), ("c", "tab\there"), ("d", "plain")],
                     file: "f", function: "g", line: 1)
        }
        #expect(line.hasSuffix(#" m a="x\x0D\x0A2026 info roostd: forged" b="q\"uote\\" c="tab\x09here" d=plain"# + "\n"), "\(line)")
        #expect(line.split(separator: "\n").count == 1)
    }

    @Test func accessLogRespectsTheLevel() {
        var fds: [Int32] = [0, 0]
        pipe(&fds)
        let box = LogLevelBox(.warning)
        let log = AccessLog(sink: StderrLogSink(fd: fds[1]), level: box)
        log.record(AccessEntry(method: "GET", path: "/", route: "/", status: 200, durationNanoseconds: 1, requestID: "quiet", remoteAddress: ""))
        box.set(.info)
        log.record(AccessEntry(method: "GET", path: "/", route: "/", status: 200, durationNanoseconds: 1, requestID: "loud", remoteAddress: ""))
        log.flush()
        close(fds[1])
        var data = [UInt8](repeating: 0, count: 4096)
        let n = read(fds[0], &data, data.count)
        let text = String(decoding: data.prefix(max(0, n)), as: UTF8.self)
        close(fds[0])
        #expect(!text.contains("quiet") && text.contains("request_id=loud"))
    }

    /// Access lines wait for `flushAccess` (or 16 KiB); any other entry
    /// writes them first, so the output stays in order.
    @Test func accessLinesAreBatchedAndKeepTheirOrder() {
        var fds: [Int32] = [0, 0]
        pipe(&fds)
        let sink = StderrLogSink(fd: fds[1])
        let entry = { (id: String) in
            AccessEntry(method: "GET", path: "/", route: "/", status: 200, durationNanoseconds: 1, requestID: id, remoteAddress: "")
        }
        sink.writeAccess(entry("first"))
        sink.writeAccess(entry("second"))
        var data = [UInt8](repeating: 0, count: 4096)
        fcntl(fds[0], F_SETFL, O_NONBLOCK)
        #expect(read(fds[0], &data, data.count) == -1, "nothing written before a flush")
        sink.write(level: .error, label: "roostd", message: "boom", fields: [], file: "f", function: "g", line: 1)
        sink.writeAccess(entry("third"))
        sink.flushAccess()
        close(fds[1])
        let n = read(fds[0], &data, data.count)
        close(fds[0])
        let lines = String(decoding: data.prefix(max(0, n)), as: UTF8.self).split(separator: "\n")
        #expect(lines.count == 4)
        #expect(lines.count == 4 && lines[0].contains("request_id=first ") && lines[1].contains("request_id=second ")
                && lines[2].hasSuffix("error roostd: boom") && lines[3].contains("request_id=third "), "\(lines)")
    }

    @Test func autoTargetFollowsJournalStream() {
        var info = stat()
        fstat(2, &info)
        let mine = "\(info.st_dev):\(info.st_ino)"
        #expect(DaemonLogging.resolve(.auto, environment: ["JOURNAL_STREAM": mine]) == .journal)
        #expect(DaemonLogging.resolve(.auto, environment: ["JOURNAL_STREAM": "1:2"]) == .stderr)
        #expect(DaemonLogging.resolve(.auto, environment: [:]) == .stderr)
        #expect(DaemonLogging.resolve(.stderr, environment: ["JOURNAL_STREAM": mine]) == .stderr)
        #expect(DaemonLogging.resolve(.journal, environment: [:]) == .journal)
    }
}
