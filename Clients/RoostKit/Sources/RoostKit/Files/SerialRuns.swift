/// Runs of one job, one after another: a call made while a run is going
/// waits for it, then runs (the upload and download queues' `sendPending`).
final class SerialRuns<Result: Sendable>: Sendable {
    private let last = Locked<Task<Result, Never>?>(nil)

    /// Runs `job` after every earlier run has ended; its result.
    func run(_ job: @escaping @Sendable () async -> Result) async -> Result {
        let task = last.update { last -> Task<Result, Never> in
            let previous = last
            let next = Task {
                _ = await previous?.value
                return await job()
            }
            last = next
            return next
        }
        return await task.value
    }
}
