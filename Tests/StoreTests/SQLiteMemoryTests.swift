import Store
import StoreSQLite
import Testing

/// How `sqlite_cache_bytes` is shared between the writer and the readers.
@Suite struct SQLiteMemoryTests {
    @Test(arguments: [
        // budget, reader connections → writer's share, each reader's share
        (32 << 20, 3, 8 << 20, 8 << 20),
        (32 << 20, 9, 8 << 20, (24 << 20) / 9),
        (4 << 20, 1, 1 << 20, 3 << 20),
        (4 << 20, 0, 1 << 20, 3 << 20),
    ])
    func split(budget: Int, readers: Int, writer: Int, reader: Int) {
        let share = SQLiteMemory.split(budget: budget, readers: readers)
        #expect(share.writer == writer)
        #expect(share.reader == reader)
        #expect(share.writer + share.reader * max(1, readers) <= budget)
    }
}
