import Foundation
import Testing
@testable import Jobs

/// Background threads run at a lower priority (their own nice value) and foreground ones keep the process's.
@Suite struct NamedThreadTests {
    /// The nice value and kernel name a new thread sees for itself.
    private func observe(background: Bool) -> (nice: Int32, name: String) {
        let seen = LockedBox<(Int32, String)?>(nil)
        let done = DispatchSemaphore(value: 0)
        NamedThread.start("nice-test", background: background) {
            let nice = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), NamedThread.currentThreadID()!)
            let name = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
            seen.update { $0 = (nice, name.trimmingCharacters(in: .newlines)) }
            done.signal()
        }
        done.wait()
        return seen.get()!
    }

    @Test(arguments: [false, true])
    func backgroundThreadsAreNicerAndNamed(background: Bool) {
        let processNice = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
        let (nice, name) = observe(background: background)
        #expect(name == "nice-test")
        #expect(nice == (background ? min(processNice + NamedThread.backgroundNice, 19) : processNice))
    }
}
