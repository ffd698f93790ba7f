import Daemon
import Testing

@Suite struct AllocatorTests {
    /// The daemon (and this test binary, through Daemon) runs on jemalloc,
    /// with the 1 s decay that roost_jemalloc.c sets.
    @Test func jemallocIsTheAllocatorWithAShortDecay() {
        #expect(Allocator.description.hasPrefix("jemalloc 5."))
        #expect(Allocator.decayMilliseconds == 1000)
    }
}
