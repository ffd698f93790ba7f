import Foundation

/// Wall time per phase of a long job, in the order the phases ended, for a
/// log line an operator can act on ("copy 1.7 s, verify 2.1 s, sync 0.8 s").
public struct PhaseTimes: Sendable, CustomStringConvertible {
    public private(set) var phases: [(name: String, seconds: Double)] = []
    private var last = DispatchTime.now().uptimeNanoseconds

    public init() {}

    /// Ends the phase running since the previous `end` (or `init`).
    public mutating func end(_ name: String) {
        let now = DispatchTime.now().uptimeNanoseconds
        phases.append((name, Double(now - last) / 1e9))
        last = now
    }

    public var description: String {
        phases.map { "\($0.name) " + String(format: "%.2f s", $0.seconds) }.joined(separator: ", ")
    }
}
