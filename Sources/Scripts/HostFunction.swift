/// The roost.* functions a script calls, by the id their trampoline carries.
enum HostFunction: Int32, CaseIterable {
    case before, after, route, every, cron
    case get, find, count, create, update, delete, asSystem, transaction
    case webhook, push, http, env, array
    case info, warn, error
    /// ctx.refuse, pushed into each before hook's ctx.
    case refuse

    var luaName: String {
        switch self {
        case .asSystem: return "as_system"
        default: return "\(self)"
        }
    }

    /// roost.log.info/warn/error.
    var isLog: Bool { self == .info || self == .warn || self == .error }

    /// Registrations: only while the scripts load.
    var isRegistration: Bool { rawValue <= HostFunction.cron.rawValue }
}
