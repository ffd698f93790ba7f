import CSodium

/// libsodium's one-time initialisation.
enum Sodium {
    static let ready: Bool = sodium_init() >= 0
}
