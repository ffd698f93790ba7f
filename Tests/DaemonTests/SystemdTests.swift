import Foundation
import Logging
import Testing
@testable import Daemon

/// These set NOTIFY_SOCKET in this process, so they run one at a time.
@Suite(.serialized) struct SystemdTests {
    /// A datagram socket standing in for systemd's notify socket.
    final class FakeManager {
        let fd: Int32
        let path: String

        init() throws {
            path = FileManager.default.temporaryDirectory.appendingPathComponent("notify-\(UUID().uuidString.prefix(8))").path
            fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { raw in
                for (i, c) in path.utf8.enumerated() { raw[i] = c }
            }
            let rc = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
            guard rc == 0 else { throw POSIXError(.EADDRINUSE) }
            var timeout = timeval(tv_sec: 0, tv_usec: 200_000)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            setenv("NOTIFY_SOCKET", path, 1)
        }

        func next() -> String? {
            var buffer = [UInt8](repeating: 0, count: 4096)
            let n = recv(fd, &buffer, buffer.count, 0)
            return n > 0 ? String(decoding: buffer.prefix(n), as: UTF8.self) : nil
        }

        deinit {
            unsetenv("NOTIFY_SOCKET")
            close(fd)
            unlink(path)
        }
    }

    @Test func notifierSendsStates() throws {
        let manager = try FakeManager()
        let notifier = SystemdNotifier()
        #expect(notifier.isListening)
        notifier.ready(status: "Serving\non :8080")
        let ready = try #require(manager.next())
        #expect(ready.hasPrefix("READY=1\nSTATUS=Serving on :8080\nMAINPID="))
        notifier.watchdogPing()
        #expect(manager.next() == "WATCHDOG=1")
        notifier.stopping(status: "bye")
        #expect(manager.next() == "STOPPING=1\nSTATUS=bye")
    }

    @Test func watchdogPingsOnlyWhileEveryLoopBeats() throws {
        let manager = try FakeManager()
        let dog = Watchdog(loops: 2, timeout: .milliseconds(600), logger: Logger(label: "test"))
        #expect(dog.pingInterval == .milliseconds(300))
        dog.beat(loop: 0)
        dog.beat(loop: 1)
        #expect(dog.tick())
        #expect(manager.next() == "WATCHDOG=1")
        Thread.sleep(forTimeInterval: 0.8)
        dog.beat(loop: 0)  // loop 1 is wedged
        #expect(!dog.tick())
        #expect(manager.next() == nil)
        dog.beat(loop: 0)
        dog.beat(loop: 1)
        #expect(dog.tick())
        #expect(manager.next() == "WATCHDOG=1")
    }

    @Test func watchdogTimeoutComesFromTheEnvironment() {
        unsetenv("WATCHDOG_USEC")
        #expect(SystemdNotifier.watchdogTimeout() == nil)
        setenv("WATCHDOG_USEC", "3000000", 1)
        setenv("WATCHDOG_PID", "\(getpid())", 1)
        #expect(SystemdNotifier.watchdogTimeout() == .seconds(3))
        setenv("WATCHDOG_PID", "1", 1)  // for another process
        #expect(SystemdNotifier.watchdogTimeout() == nil)
        unsetenv("WATCHDOG_USEC")
        unsetenv("WATCHDOG_PID")
    }

    @Test func noSocketActivationWithoutListenFDs() {
        unsetenv("LISTEN_FDS")
        #expect(SocketActivation.takeListeningDescriptors().isEmpty)
    }
}
