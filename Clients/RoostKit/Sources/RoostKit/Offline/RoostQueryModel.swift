#if canImport(Observation)
import Foundation
import Observation

/// The local results of a query as an `@Observable` model for SwiftUI: it
/// follows ``OfflineCollection/results(_:)`` (local writes, sync, live events)
/// on the main actor.
///
/// ```swift
/// struct NotesView: View {
///     @State private var notes = RoostQueryModel(store.collection("notes", of: Note.self),
///                                                query: Query().sorted(by: "title"))
///     var body: some View {
///         List(notes.entities) { note in
///             Text(note.value.title).opacity(notes.hasPendingWrites(note.id) ? 0.5 : 1)
///         }
///     }
/// }
/// ```
@available(iOS 17.0, macOS 14.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, *)
@MainActor
@Observable
public final class RoostQueryModel<Model: Codable & Sendable> {
    /// The matching local documents, in the query's order.
    public private(set) var entities: [Entity<Model>] = []
    /// Ids with local writes the server has not taken yet.
    public private(set) var pendingIDs: Set<String> = []
    /// Matching documents that do not decode as `Model`.
    public private(set) var failures: [LocalResults<Model>.Failure] = []
    /// Why the results stopped following the store (a query the store cannot evaluate, say).
    public private(set) var error: RoostError?
    /// False until the first results arrive.
    public private(set) var isLoaded = false
    /// How many times the results were replaced (for tests and debugging).
    public private(set) var updates = 0

    /// The following task, in a Sendable box so the (nonisolated) deinit can cancel it.
    @ObservationIgnored private nonisolated let task = Locked<Task<Void, Never>?>(nil)

    /// Starts following `query` on `collection` at once.
    public init(_ collection: OfflineCollection<Model>, query: Query = Query()) {
        let results = collection.results(query)
        task.set(Task { [weak self] in
            do {
                for try await next in results {
                    guard let self else { return }
                    self.apply(next)
                }
            } catch {
                self?.error = error as? RoostError ?? .localStore(String(describing: error))
            }
        })
    }

    /// Whether `id`'s local copy holds writes the server has not taken yet.
    public func hasPendingWrites(_ id: String) -> Bool { pendingIDs.contains(id) }

    /// Stops following the store (also done when the model goes away).
    public func stop() {
        task.update { $0?.cancel(); $0 = nil }
    }

    private func apply(_ results: LocalResults<Model>) {
        entities = results.entities
        pendingIDs = results.pendingIDs
        failures = results.failures
        isLoaded = true
        updates += 1
    }

    deinit { task.value?.cancel() }
}
#endif
