import Foundation
@testable import Roost

extension RoostConfig {
    /// The configuration a daemon would load from `yaml` (written to a
    /// temporary file, removed after) with `env` as its environment.
    static func loaded(_ yaml: String, env: [String: String] = [:]) throws -> RoostConfig {
        let path = NSTemporaryDirectory() + "roost-config-test-" + UUID().uuidString + ".yaml"
        try yaml.write(toFile: path, atomically: true, encoding: .utf8)
        defer { unlink(path) }
        var config = RoostConfig()
        try config.apply(yamlFile: path)
        try config.apply(environment: env)
        return config
    }
}
