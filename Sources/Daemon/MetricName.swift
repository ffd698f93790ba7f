/// A metric's Prometheus name with its HELP text, declared together once
/// (`MetricName+Declared.swift`); `/metrics` prints the text as `# HELP`.
public struct MetricName: Sendable, Hashable {
    public let name: String
    public let help: String

    public init(_ name: String, help: String) {
        self.name = name
        self.help = help
    }
}
