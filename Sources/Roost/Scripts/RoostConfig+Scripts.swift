import Foundation
import Scripts

extension RoostConfig {
    /// The `scripts:` mapping: budgets and what scripts may reach outside the database.
    /// The directory is the scalar `scripts_dir`.
    public struct Scripts: Sendable, Equatable {
        /// Most MiB one script state may hold.
        public var memoryMiB = 32
        /// A `/fn/` function's time budget.
        public var functionTimeoutMs = 2000
        /// A scheduled job's time budget.
        public var jobTimeoutMs = 30_000
        /// Threads that run after hooks, functions and jobs (each with its own Lua state).
        public var workers = 2
        /// Hosts roost.http may reach (exact names, or `*.example.org`).
        public var httpAllow: [String] = []
        /// Environment variables roost.env may read.
        public var env: [String] = []
    }

    mutating func applyScripts(_ value: Any) throws {
        guard let map = value as? [String: Any] else { throw Invalid("scripts must be a mapping") }
        func int(_ key: String, _ v: Any, _ range: ClosedRange<Int>) throws -> Int {
            guard let n = (v as? Int) ?? Int("\(v)"), range.contains(n) else {
                throw Invalid("scripts.\(key) must be a whole number from \(range.lowerBound) to \(range.upperBound)")
            }
            return n
        }
        for (key, v) in map {
            switch key {
            case "memory_mib": scripts.memoryMiB = try int(key, v, 1...1024)
            case "function_timeout_ms": scripts.functionTimeoutMs = try int(key, v, 1...600_000)
            case "job_timeout_ms": scripts.jobTimeoutMs = try int(key, v, 1...3_600_000)
            case "workers": scripts.workers = try int(key, v, 1...64)
            case "http_allow":
                scripts.httpAllow = Setting.list(v)
                if let bad = scripts.httpAllow.first(where: { $0.isEmpty || $0.contains("/") || $0.contains(":") }) {
                    throw Invalid("scripts.http_allow: \"\(bad)\" is not a host name (example.org or *.example.org)")
                }
            case "env":
                scripts.env = Setting.list(v)
                if let bad = scripts.env.first(where: { $0.isEmpty || !$0.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" } }) {
                    throw Invalid("scripts.env: \"\(bad)\" is not a variable name")
                }
            default:
                throw Invalid("scripts: unknown setting \"\(key)\" (use memory_mib, function_timeout_ms, job_timeout_ms, workers, http_allow, env)")
            }
        }
    }

    /// The budgets of this config's scripts.
    var scriptLimits: ScriptLimits {
        var limits = ScriptLimits()
        limits.memoryBytes = scripts.memoryMiB << 20
        limits.hookNanoseconds = UInt64(hookBudgetMilliseconds) * 1_000_000
        limits.functionNanoseconds = UInt64(scripts.functionTimeoutMs) * 1_000_000
        limits.jobNanoseconds = UInt64(scripts.jobTimeoutMs) * 1_000_000
        return limits
    }

    /// The values of the variables named in `scripts.env`, from this process's environment.
    var scriptEnvironment: [String: String] {
        let all = ProcessInfo.processInfo.environment
        return Dictionary(uniqueKeysWithValues: scripts.env.compactMap { name in all[name].map { (name, $0) } })
    }
}
