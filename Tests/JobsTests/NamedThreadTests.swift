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

    /// The EEVDF slice (ns) the calling thread has, from /proc (nil where the kernel does not show it).
    private static func ownSlice() -> Int? {
        let text = (try? String(contentsOfFile: "/proc/thread-self/sched", encoding: .utf8)) ?? ""
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("se.slice") }) else { return nil }
        return line.split(separator: ":").last.flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
    }

    /// A thread started by a request thread (which has the short slice) does not inherit it,
    /// unless it answers requests itself.
    @Test(arguments: [false, true])
    func onlyRequestThreadsKeepTheShortSlice(answersRequests: Bool) throws {
        let seen = LockedBox<(parent: Int?, child: Int?)?>(nil)
        let done = DispatchSemaphore(value: 0)
        NamedThread.start("slice-parent", answersRequests: true) {
            let parent = Self.ownSlice()
            NamedThread.start("slice-child", answersRequests: answersRequests) {
                seen.update { $0 = (parent, Self.ownSlice()) }
                done.signal()
            }
        }
        done.wait()
        let (parent, child) = seen.get()!
        guard let parent, parent == Int(NamedThread.requestSliceNanoseconds), let child else {
            // A kernel before 6.12, or one that does not show se.slice: nothing to check.
            return
        }
        if answersRequests {
            #expect(child == parent)
        } else {
            #expect(child > parent)
        }
    }
}
