import Foundation
import JSON
@testable import Roost
import Testing

/// `on_user_delete` (config file and `/admin/collections`, one parser) and
/// Sign in with Apple's token settings.
@Suite struct AccountDeletionConfigTests {
    @Test(arguments: [("cascade", RoostConfig.UserDeletePolicy.cascade), ("anonymise", .anonymise), ("keep", .keep)])
    func eachPolicyFromTheFileAndAtRunTime(name: String, policy: RoostConfig.UserDeletePolicy) throws {
        let config = try RoostConfig.loaded("collections:\n  posts:\n    on_user_delete: \(name)\n  files:\n    on_user_delete: \(name)\n")
        #expect(config.collections["posts"]?.onUserDelete == policy && config.collections["files"]?.onUserDelete == policy)
        let runtime = try RuntimeCollection.parse("posts", JSONObject([("on_user_delete", .string(name))]))
        #expect(runtime.onUserDelete == policy)
        // Shown back as set (keep, the default, is left out).
        #expect(runtime.json["on_user_delete"] == (policy == .keep ? nil : .string(name)))
    }

    @Test func keepIsTheDefault() throws {
        #expect(try RoostConfig.loaded("collections:\n  posts:\n    permission: private\n").collections["posts"]?.onUserDelete == .keep)
    }

    @Test(arguments: ["collections:\n  posts:\n    on_user_delete: shred\n",
                      "collections:\n  users:\n    on_user_delete: cascade\n",
                      "oidc_providers:\n  apple: {client_ids: [a], team_id: T}\n",
                      "oidc_providers:\n  google: {client_ids: [a], team_id: T, key_id: K}\n",
                      "oidc_providers:\n  google: {client_ids: [a], token_key_file: /t.key}\n",
                      "oidc_providers:\n  apple: {client_ids: [a], team_id: T, key_id: K, token_endpoint: ftp://x}\n"])
    func refusesWhatItCannotUse(yaml: String) {
        #expect(throws: RoostConfig.Invalid.self) { try RoostConfig.loaded(yaml) }
    }

    @Test func appleTokenSettings() throws {
        let config = try RoostConfig.loaded("oidc_providers:\n  apple: {client_ids: [a], team_id: TEAM, key_id: KEY, private_key_file: /k.p8, token_endpoint: 'http://127.0.0.1:9', token_key_file: /t.key}\n")
        let apple = try #require(config.oidcProviders["apple"]?.apple)
        #expect(apple == AppleTokenSettings(teamID: "TEAM", keyID: "KEY", privateKeyFile: "/k.p8", endpoint: "http://127.0.0.1:9", tokenKeyFile: "/t.key")
                && apple.isSet)
        #expect(try RoostConfig.loaded("oidc_providers:\n  apple: {client_ids: [a]}\n").oidcProviders["apple"]?.apple.isSet == false)
    }

    @Test func aMissingKeyStopsTheStartWithAMessage() {
        let settings = AppleTokenSettings(teamID: "T", keyID: "K", privateKeyFile: "/nonexistent/key.p8")
        #expect(throws: RoostConfig.Invalid.self) { try AppleTokens(settings: settings) }
    }

    @Test(arguments: [(400, false), (401, false), (429, true), (500, true), (503, true)])
    func refusalsAreFinalAndOutagesRetried(status: Int, retried: Bool) {
        let verdict = AppleTokens.verdict(status, Array(#"{"error":"invalid_grant"}"#.utf8), "token")
        switch verdict {
        case .failed(let why): #expect(retried && why.contains("HTTP \(status) invalid_grant"))
        case .refused(let why): #expect(!retried && why.contains("invalid_grant"))
        case .done, .interrupted: Issue.record("neither done nor interrupted")
        }
    }
}
