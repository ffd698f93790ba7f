import Foundation

/// One scalar operator setting, declared once (`RoostConfig.settings`): its
/// key (in YAML, and as `ROOST_<KEY>` in the environment), how a value is
/// parsed and checked, how the running value reads, whether a SIGHUP
/// applies it or it needs a restart, and its one-line doc. Parsing,
/// `check-config`, the reload's report and the docs checks all come from
/// the one table.
struct Setting: Sendable {
    /// What a SIGHUP does with a changed value.
    enum OnReload: String, Sendable {
        /// Applied to the running daemon.
        case applied
        /// Named in the reload's warning; used from the next start.
        case restart
    }

    let key: String
    let onReload: OnReload
    let doc: String
    /// Sets the value from YAML, the environment or a flag (`source` names it in errors).
    let parse: @Sendable (inout RoostConfig, Any, _ source: String) throws -> Void
    /// The value as text: compared across a reload, shown by `check-config`.
    let value: @Sendable (RoostConfig) -> String
    /// Shown only as set or unset.
    var isSecret = false
    /// The default as the docs say it, when it depends on the machine.
    var machineDefault: String?

    /// This setting with its default described in words (`roostd settings`).
    func shownDefault(_ text: String) -> Setting {
        var copy = self
        copy.machineDefault = text
        return copy
    }

    /// How the docs name it: a mapping's member as `tls.certificate`, `cors.origins`.
    var documentedName: String {
        for prefix in ["tls_", "cors_"] where key.hasPrefix(prefix) { return prefix.dropLast() + "." + key.dropFirst(prefix.count) }
        return key
    }

    var environmentName: String { "ROOST_" + key.uppercased() }

    /// `key: old → new` for a reload's log (a secret: only that it changed).
    func change(_ old: RoostConfig, _ new: RoostConfig) -> String {
        isSecret ? "\(key): changed" : "\(key): \(value(old)) → \(value(new))"
    }

    typealias Invalid = RoostConfig.Invalid

    /// A whole number in `range`.
    static func int(_ key: String, _ path: WritableKeyPath<RoostConfig, Int> & Sendable, _ range: ClosedRange<Int>,
                    _ doc: String, _ onReload: OnReload = .restart) -> Setting {
        Setting(key: key, onReload: onReload, doc: doc, parse: { config, value, source in
            guard let i = (value as? Int) ?? Int("\(value)"), range.contains(i) else {
                throw Invalid("\(source): \(key) must be a whole number from \(range.lowerBound) to \(range.upperBound)")
            }
            config[keyPath: path] = i
        }, value: { "\($0[keyPath: path])" })
    }

    /// One of a string enumeration's cases.
    static func choice<T: RawRepresentable & CaseIterable & Sendable>(
        _ key: String, _ path: WritableKeyPath<RoostConfig, T> & Sendable, _ doc: String, _ onReload: OnReload = .restart
    ) -> Setting where T.RawValue == String {
        Setting(key: key, onReload: onReload, doc: doc, parse: { config, value, source in
            guard let v = T(rawValue: "\(value)") else {
                throw Invalid("\(source): \(key) must be \(T.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            config[keyPath: path] = v
        }, value: { $0[keyPath: path].rawValue })
    }

    /// Anything else: its own parser and reader.
    static func custom(_ key: String, _ doc: String, _ onReload: OnReload = .restart,
                       parse: @escaping @Sendable (inout RoostConfig, Any, String) throws -> Void,
                       value: @escaping @Sendable (RoostConfig) -> String, secret: Bool = false) -> Setting {
        Setting(key: key, onReload: onReload, doc: doc, parse: parse, value: value, isSecret: secret)
    }

    /// A list given as YAML or as `a,b,c`.
    static func list(_ value: Any) -> [String] {
        (value as? [Any])?.map { "\($0)" }
            ?? "\(value)".split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }
}
