extension RoostConfig {
    /// The scalar settings as the Markdown table of docs/CONFIGURATION.md
    /// (`roostd settings --markdown`): name, default, environment variable,
    /// whether SIGHUP applies it, and its doc. Generated from `settings`, so
    /// the page cannot drift from what the daemon parses.
    public static func settingsMarkdown() -> String {
        let defaults = RoostConfig()
        var lines = ["| setting | default | environment | SIGHUP | what |", "|---|---|---|---|---|"]
        for setting in settings {
            let value = setting.value(defaults)
            let shown = setting.machineDefault ?? (setting.isSecret || value.isEmpty ? "unset" : "`\(value)`")
            let reload = setting.onReload == .applied ? "applied" : "restart"
            lines.append("| `\(setting.documentedName)` | \(shown) | `\(setting.environmentName)` | \(reload) | "
                         + setting.doc.replacingOccurrences(of: "|", with: "\\|") + " |")
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
