#if canImport(Security)
import Foundation
import Security

/// A ``TokenStore`` in the Keychain (Apple platforms): one generic-password
/// item per `service`/`account`.
///
/// - `accessGroup`: a keychain access group (`<TeamID>.com.example.shared`)
///   shared with the app's extensions (widgets, share and notification
///   extensions), which then see the same session. Nil uses the app's default group.
/// - `accessible`: when the item can be read; the default,
///   `kSecAttrAccessibleAfterFirstUnlock`, lets a background sync or a
///   notification extension read it while the device is locked.
/// - On macOS the item goes into the data-protection keychain
///   (`kSecUseDataProtectionKeychain`), which honours access groups and
///   accessibility like iOS, not the legacy file-based keychain. That keychain
///   needs a signed app with a keychain entitlement (unsigned tools get
///   `errSecMissingEntitlement`, -34018): pass `dataProtectionKeychain: false`
///   for a command-line tool.
///
/// This file compiles only where `Security` exists (never on Linux, where the
/// package's tests run); it is reviewed, and built by the macOS/iOS CI workflow.
public struct KeychainTokenStore: TokenStore {
    /// The item's service, such as the app's bundle id.
    public let service: String
    /// The item's account, such as the server's host.
    public let account: String
    /// The keychain access group shared with app extensions, or nil.
    public let accessGroup: String?
    /// When the item is readable (a `kSecAttrAccessible…` value).
    public let accessible: String
    /// macOS: use the data-protection keychain (ignored elsewhere, where it is the only one).
    public let dataProtectionKeychain: Bool

    public init(service: String, account: String = "roost-session", accessGroup: String? = nil,
                accessible: CFString = kSecAttrAccessibleAfterFirstUnlock, dataProtectionKeychain: Bool = true) {
        self.service = service
        self.account = account
        self.accessGroup = accessGroup
        self.accessible = accessible as String
        self.dataProtectionKeychain = dataProtectionKeychain
    }

    /// The attributes that name the item (and the keychain it lives in).
    private var query: [String: Any] {
        var q: [String: Any] = [kSecClass as String: kSecClassGenericPassword,
                                kSecAttrService as String: service, kSecAttrAccount as String: account]
        if let accessGroup { q[kSecAttrAccessGroup as String] = accessGroup }
        #if os(macOS)
        if dataProtectionKeychain { q[kSecUseDataProtectionKeychain as String] = true }
        #endif
        return q
    }

    public func load() throws -> RoostSession? {
        var q = query
        q[kSecReturnData as String] = true
        q[kSecMatchLimit as String] = kSecMatchLimitOne
        var item: CFTypeRef?
        let status = SecItemCopyMatching(q as CFDictionary, &item)
        if status == errSecItemNotFound { return nil }
        guard status == errSecSuccess, let data = item as? Data else { throw RoostError.localStore("Keychain read failed: \(status)") }
        return try JSONDecoder().decode(RoostSession.self, from: data)
    }

    public func save(_ session: RoostSession) throws {
        let data = try JSONEncoder().encode(session)
        let update: [String: Any] = [kSecValueData as String: data, kSecAttrAccessible as String: accessible]
        var status = SecItemUpdate(query as CFDictionary, update as CFDictionary)
        if status == errSecItemNotFound {
            var add = query
            add[kSecValueData as String] = data
            add[kSecAttrAccessible as String] = accessible
            status = SecItemAdd(add as CFDictionary, nil)
        }
        guard status == errSecSuccess else { throw RoostError.localStore("Keychain write failed: \(status)") }
    }

    public func clear() throws {
        let status = SecItemDelete(query as CFDictionary)
        guard status == errSecSuccess || status == errSecItemNotFound else { throw RoostError.localStore("Keychain delete failed: \(status)") }
    }
}
#endif
