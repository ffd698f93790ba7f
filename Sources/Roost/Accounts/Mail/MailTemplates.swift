import Foundation
import HTTP

/// The mails accounts send, one template per kind, in text and HTML.
/// Built-in defaults; an operator's `mail_templates_dir` may replace any
/// of them with `<kind>.txt` (first line `Subject: …`, a blank line, the
/// text) and `<kind>.html`. Placeholders: `{{app_name}}`, `{{code}}`,
/// `{{link}}`, `{{email}}`, `{{minutes}}`; in HTML they are escaped.
struct MailTemplates: Sendable {
    enum Kind: String, Sendable, CaseIterable {
        /// A code and link to verify the address of a new account.
        case verifyEmail = "verify_email"
        /// A code and link to set a new password.
        case passwordReset = "password_reset"
        /// A code and link sent to the new address of an email change.
        case emailChange = "email_change"
        /// To the owner of an address someone tried to sign up (or change an email) with.
        case accountExists = "account_exists"
        /// To the old address after an email change.
        case emailChanged = "email_changed"
    }

    struct Template: Sendable {
        let subject: String
        let text: String
        let html: String
    }

    let templates: [Kind: Template]

    /// The built-in templates, with any the operator's directory replaces.
    init(directory: String) throws {
        var all: [Kind: Template] = [:]
        for kind in Kind.allCases {
            var t = Self.defaults[kind]!
            if !directory.isEmpty {
                let base = URL(fileURLWithPath: directory).appendingPathComponent(kind.rawValue)
                if let text = try? String(contentsOf: base.appendingPathExtension("txt"), encoding: .utf8) {
                    let lines = text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false)
                    guard let first = lines.first, first.hasPrefix("Subject:") else {
                        throw RoostConfig.Invalid("\(base.path).txt must start with a \"Subject: …\" line")
                    }
                    let body = lines.count > 1 ? String(lines[1]).drop { $0 == "\n" || $0 == "\r" } : ""
                    t = Template(subject: String(first.dropFirst("Subject:".count)).trimmingCharacters(in: .whitespacesAndNewlines),
                                 text: String(body), html: t.html)
                }
                if let html = try? String(contentsOf: base.appendingPathExtension("html"), encoding: .utf8) {
                    t = Template(subject: t.subject, text: t.text, html: html)
                }
            }
            all[kind] = t
        }
        templates = all
    }

    /// The subject, text and HTML of `kind` with `values` filled in.
    func render(_ kind: Kind, _ values: [String: String]) -> (subject: String, text: String, html: String) {
        let t = templates[kind]!
        func fill(_ s: String, escape: Bool) -> String {
            var out = s
            for (name, value) in values { out = out.replacingOccurrences(of: "{{\(name)}}", with: escape ? HTMLEscape.escape(value) : value) }
            return out
        }
        let subject = fill(t.subject, escape: false).filter { $0 != "\r" && $0 != "\n" }
        return (subject, fill(t.text, escape: false), fill(t.html, escape: true))
    }

    static let defaults: [Kind: Template] = [
        .verifyEmail: Template(
            subject: "Verify your email for {{app_name}}",
            text: "Your {{app_name}} verification code is {{code}}.\n\nOr open this link to verify {{email}}:\n{{link}}\n\nThe code and the link work once, for {{minutes}} minutes. If you did not sign up, ignore this mail.\n",
            html: page("<p>Your {{app_name}} verification code is</p><p style=\"font-size:28px;letter-spacing:4px\"><b>{{code}}</b></p><p>Or <a href=\"{{link}}\">verify {{email}}</a>.</p><p>The code and the link work once, for {{minutes}} minutes. If you did not sign up, ignore this mail.</p>")),
        .passwordReset: Template(
            subject: "Reset your {{app_name}} password",
            text: "Your {{app_name}} password reset code is {{code}}.\n\nOr open this link to choose a new password:\n{{link}}\n\nThe code and the link work once, for {{minutes}} minutes. If you did not ask for this, ignore this mail: your password stays as it is.\n",
            html: page("<p>Your {{app_name}} password reset code is</p><p style=\"font-size:28px;letter-spacing:4px\"><b>{{code}}</b></p><p>Or <a href=\"{{link}}\">choose a new password</a>.</p><p>The code and the link work once, for {{minutes}} minutes. If you did not ask for this, ignore this mail: your password stays as it is.</p>")),
        .emailChange: Template(
            subject: "Confirm your new email for {{app_name}}",
            text: "Your {{app_name}} code to confirm {{email}} as your new address is {{code}}.\n\nOr open this link:\n{{link}}\n\nThe code and the link work once, for {{minutes}} minutes. If you did not ask for this, ignore this mail.\n",
            html: page("<p>Your {{app_name}} code to confirm {{email}} as your new address is</p><p style=\"font-size:28px;letter-spacing:4px\"><b>{{code}}</b></p><p>Or <a href=\"{{link}}\">confirm it here</a>.</p><p>The code and the link work once, for {{minutes}} minutes. If you did not ask for this, ignore this mail.</p>")),
        .accountExists: Template(
            subject: "Your {{app_name}} account",
            text: "Someone tried to create a {{app_name}} account, or to move one, to {{email}}, which already has an account.\n\nIf it was you, sign in instead, or reset your password if you forgot it. If not, ignore this mail.\n",
            html: page("<p>Someone tried to create a {{app_name}} account, or to move one, to {{email}}, which already has an account.</p><p>If it was you, sign in instead, or reset your password if you forgot it. If not, ignore this mail.</p>")),
        .emailChanged: Template(
            subject: "Your {{app_name}} email was changed",
            text: "The email of your {{app_name}} account was changed to {{email}}.\n\nIf you did not do this, reset your password now and contact the app's support.\n",
            html: page("<p>The email of your {{app_name}} account was changed to {{email}}.</p><p>If you did not do this, reset your password now and contact the app's support.</p>")),
    ]

    static func page(_ body: String) -> String {
        "<!doctype html><html><body style=\"font-family:system-ui,sans-serif;color:#222\">\(body)</body></html>\n"
    }
}
