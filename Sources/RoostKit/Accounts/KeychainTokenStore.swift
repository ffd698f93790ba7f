#if canImport(Security)
import Foundation
import Security

/// A ``TokenStore`` in the Keychain (Apple platforms): one generic-password
/// item per `service`/`account`, readable after the first unlock.
public struct KeychainTokenStore: TokenStore {
    /// The item's service, such as the app's bundle id.
    public let service: String
    /// The item's account, such as the server's host.
    public let account: String

    public init(service: String, account: String = "roost-session") {
        self.service = service
        self.account = account
    }

    private var query: [String: Any] {
        [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service, kSecAttrAccount as String: account]
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
        let update: [String: Any] = [kSecValueData as String: data]
        var status = SecItemUpdate(query as CFDictionary, update as CFDictionary)
        if status == errSecItemNotFound {
            var add = query
            add[kSecValueData as String] = data
            add[kSecAttrAccessible as String] = kSecAttrAccessibleAfterFirstUnlock
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
