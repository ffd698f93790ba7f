import Foundation
import Webhooks

/// Email accounts and the mail they send: who must give what at sign-up,
/// whether unverified addresses may sign in, codes, links and SMTP.
public struct AccountSettings: Sendable {
    /// What a sign-up must carry (`signup_requires`).
    public enum Required: String, Sendable, CaseIterable {
        case username, email, either, both
    }

    public var signupRequires: Required = .username
    /// Whether an account whose email is not verified may sign in.
    public var unverifiedLogin = true
    /// Seconds a verification, reset or email-change code (and its link) lives.
    public var codeLifetime = 15 * 60
    /// The app's name in mails.
    public var appName = "Roost"
    /// Where links in mails point (`<public_url>/auth/…`); empty: the first listen address.
    public var publicURL = ""
    /// `smtp://host:port` or `smtps://host:port`; empty: mail waits in the outbox.
    public var smtpURL = ""
    public var smtpFrom = "roost@localhost"
    public var smtpUsername = ""
    /// A file holding the SMTP password (`$CREDENTIALS_DIRECTORY` expanded); or ROOST_SMTP_PASSWORD.
    public var smtpPasswordFile = ""
    public var smtpTLS: SMTPSender.TLS = .require
    public var smtpTimeout = 15
    /// A directory of `<kind>.txt` / `<kind>.html` templates that replace the built-in ones.
    public var templatesDir = ""
    /// Whether `POST /auth/anonymous` makes guest accounts.
    public var anonymousAccounts = false
    /// Seconds a guest account may go unused before it is removed.
    public var anonymousMaxIdle = 30 * 24 * 3600

    public init() {}
}

extension RoostConfig {
    /// The account and mail rows of `settings`.
    static let accountSettings: [Setting] = [
        .choice("signup_requires", \.accounts.signupRequires, "what a sign-up must carry: username, email, either or both"),
        .custom("unverified_login", "whether an account with an unverified email may sign in", parse: { c, value, source in
            c.accounts.unverifiedLogin = try Setting.bool(value, key: "unverified_login", source: source)
        }, value: { "\($0.accounts.unverifiedLogin)" }),
        .int("account_code_lifetime", \.accounts.codeLifetime, 1...(7 * 24 * 3600),
             "seconds a verification, reset or email-change code and its link live"),
        .custom("app_name", "the app's name in mails", parse: { c, v, _ in c.accounts.appName = "\(v)" }, value: { $0.accounts.appName }),
        .custom("public_url", "the address links in mails start with (empty: the first listen address)", parse: { c, value, source in
            let url = "\(value)".trimmingCharacters(in: .whitespaces)
            guard url.isEmpty || url.hasPrefix("http://") || url.hasPrefix("https://") else {
                throw Invalid("\(source): public_url must start with http:// or https://")
            }
            c.accounts.publicURL = url.hasSuffix("/") ? String(url.dropLast()) : url
        }, value: { $0.accounts.publicURL }),
        .custom("smtp_url", "smtp://host:port or smtps://host:port of the mail server (empty: mail waits)", parse: { c, value, source in
            let url = "\(value)".trimmingCharacters(in: .whitespaces)
            guard url.isEmpty || url.hasPrefix("smtp://") || url.hasPrefix("smtps://") else {
                throw Invalid("\(source): smtp_url must start with smtp:// or smtps://")
            }
            c.accounts.smtpURL = url
        }, value: { $0.accounts.smtpURL }),
        .custom("smtp_from", "the sender address of mails", parse: { c, value, source in
            let from = "\(value)"
            guard EmailAddress.normalised(from) != nil else { throw Invalid("\(source): smtp_from must be an email address") }
            c.accounts.smtpFrom = from
        }, value: { $0.accounts.smtpFrom }),
        .custom("smtp_username", "the SMTP AUTH user (empty: no AUTH)", parse: { c, v, _ in c.accounts.smtpUsername = "\(v)" },
                value: { $0.accounts.smtpUsername }),
        .custom("smtp_password_file", "a file holding the SMTP password (or set ROOST_SMTP_PASSWORD)", parse: { c, v, _ in
            c.accounts.smtpPasswordFile = RoostConfig.expandingCredentials("\(v)")
        }, value: { $0.accounts.smtpPasswordFile }),
        .custom("smtp_tls", "STARTTLS on smtp://: require, try or off", parse: { c, value, source in
            // YAML reads a bare off as false.
            let text = (value as? Bool).map { $0 ? "require" : "off" } ?? "\(value)"
            guard let tls = SMTPSender.TLS(rawValue: text) else { throw Invalid("\(source): smtp_tls must be require, try or off") }
            c.accounts.smtpTLS = tls
        }, value: { $0.accounts.smtpTLS.rawValue }),
        .int("smtp_timeout", \.accounts.smtpTimeout, 1...600, "seconds one SMTP delivery may take"),
        .custom("anonymous_accounts", "whether POST /auth/anonymous makes guest accounts", parse: { c, value, source in
            c.accounts.anonymousAccounts = try Setting.bool(value, key: "anonymous_accounts", source: source)
        }, value: { "\($0.accounts.anonymousAccounts)" }),
        .int("anonymous_max_idle", \.accounts.anonymousMaxIdle, 1...(10 * 365 * 24 * 3600),
             "seconds a guest account may go unused before it is removed (through the write path)"),
        .custom("mail_templates_dir", "a directory of <kind>.txt and <kind>.html mail templates (empty: built-in)",
                parse: { c, v, _ in c.accounts.templatesDir = "\(v)" }, value: { $0.accounts.templatesDir }),
    ]
}

extension Setting {
    static func bool(_ value: Any, key: String, source: String) throws -> Bool {
        if let b = value as? Bool { return b }
        switch "\(value)".lowercased() {
        case "true", "yes", "on", "1": return true
        case "false", "no", "off", "0": return false
        default: throw Invalid("\(source): \(key) must be true or false")
        }
    }
}
