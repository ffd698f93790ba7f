import EventLoop
import HTTP
import Store

/// The one gate of the admin API: the caller is checked on a reader, so a
/// refused request never takes a writer slot, and admin answers are never
/// cached (they may hold secrets, e.g. a webhook endpoint's).
extension CallerJobs {
    /// Runs `body` on a reader once the caller is the admin. `body` returns the
    /// response, or nil when another thread will answer (e.g. a backup).
    func readAsAdmin(_ request: Request, _ out: ResponseWriter, _ body: @escaping @Sendable (any DocumentReading) throws -> Response?) {
        read(request, out) { reader, caller in
            try AccessPolicy.requireAdmin(caller.principal)
            guard var response = try body(reader) else { return nil }
            response.headers.add("Cache-Control", "no-store")
            return response
        }
    }

    /// Runs `body` in the writer's next group commit once a reader found the caller is the admin.
    func writeAsAdmin(_ request: Request, _ out: ResponseWriter, committed: (@Sendable () -> Void)? = nil,
                      _ body: @escaping @Sendable (any DocumentWriting) throws -> Response) {
        write(request, out, committed: committed, prepare: { caller in
            try AccessPolicy.requireAdmin(caller.principal)
        }) { writer, _ in try body(writer) }
    }
}
