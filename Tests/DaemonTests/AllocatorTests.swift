import Daemon
import Testing

@Suite struct AllocatorTests {
    /// The daemon (and this test binary, through Daemon) runs on jemalloc,
    /// which takes the shorter decay.
    @Test func jemallocIsTheAllocatorAndTakesTheDecay() {
        #expect(Allocator.description.hasPrefix("jemalloc 5."))
        #expect(Allocator.returnFreedMemoryPromptly())
    }
}
