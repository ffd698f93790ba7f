import HTTP
import Hooks
import JSON
import Jobs
import Push
import Store

/// The seed messaging app's backend, as built-in hooks on a new message:
///
/// 1. `messaging.sender` — the sender is the caller (`senderId` is set from
///    the session; another id is refused), recipients exist, and the thread
///    id is the participants' ids sorted and joined by `:`;
/// 2. `messaging.acl` — the message is readable by sender and recipients only;
/// 3. `messaging.thread` — after the write, creates the thread or updates its
///    `lastMessage` reference and `lastMessageAt`;
/// 4. `messaging.push` — after the write, one `message.created` outbox event
///    per recipient, with the sender's public profile and the recipient's
///    devices (webhooks, gorush); with a push provider configured, an alert
///    per recipient device in the push outbox too (`PushSender`).
///
/// All four run in the message's savepoint: a refusal anywhere leaves no
/// message, no thread change and no event.
struct MessagingHooks: Sendable {
    let threads: String
    let messages: String
    let settings: ReloadableSettings
    let outboxDirty: LockedBox<Bool>
    /// The hook path the thread writes take (so they fire `threads.*` hooks and webhooks too).
    let services: HookServices?
    /// Direct pushes (APNs, FCM) and how their alerts read.
    let push: PushSender
    let alerts: RoostConfig.Push

    static let users = AccessPolicy.usersCollection
    static let maxRecipients = 100

    func register(into registry: HookRegistry<any DocumentWriting>) {
        let (threads, messages, settings, dirty, services, push, alerts) = (self.threads, self.messages, self.settings, outboxDirty, self.services,
                                                                            self.push, self.alerts)
        registry.before(.beforeCreate, collection: messages, id: "messaging.sender", priority: -300, source: HookSource.builtIn) { ctx, next in
            try Self.checkParticipants(ctx)
            try next()
        }
        registry.before(.beforeCreate, collection: messages, id: "messaging.acl", priority: -200, source: HookSource.builtIn) { ctx, next in
            let (sender, recipients) = try Self.participants(ctx.entity)
            var acl = JSONObject()
            acl["read"] = .array(Self.unique([sender] + recipients).map { .string($0) })
            acl["write"] = .array([])
            ctx.entity["_acl"] = .object(acl)
            try next()
        }
        registry.before(.beforeUpdate, collection: messages, id: "messaging.immutable", priority: -300, source: HookSource.builtIn) { ctx, next in
            try Self.checkEdit(ctx)
            try next()
        }
        registry.before(.beforeCreate, collection: messages, id: "messaging.thread", priority: -100, source: HookSource.builtIn) { ctx, next in
            try next()
            try Self.upsertThread(ctx, threads: threads, messages: messages, services: services)
        }
        registry.before(.beforeCreate, collection: messages, id: "messaging.push", priority: -50, source: HookSource.builtIn) { ctx, next in
            try next()
            if try Self.enqueuePush(ctx, privateFields: settings.privateUserFields) { dirty.set(true) }
            try Self.enqueueAlerts(ctx, push: push, alerts: alerts, privateFields: settings.privateUserFields, limits: settings.limits)
        }
    }

    /// Checks sender and recipients and fixes `senderId`, `recipients` and `threadId`.
    static func checkParticipants(_ ctx: WriteContext<any DocumentWriting>) throws {
        let sender: String
        switch (ctx.actor, ctx.privileged, ctx.entity["senderId"]) {
        case (nil, false, _):
            throw HookRefusal(.unauthorized, "Sign in to send messages.")
        case (let me?, _, let given):
            if let given, given != .string(me) {
                throw HookRefusal(.forbidden, "senderId must be your own user id; you cannot send as someone else.")
            }
            sender = me
        case (nil, true, .string(let given)?):
            sender = given
        case (nil, true, _):
            throw HookRefusal(.invalidDocument, "An administrator sending a message must name its senderId.")
        }
        var recipients: [String]
        switch (ctx.entity["recipients"], ctx.entity["recipientId"]) {
        case (.array(let list)?, _):
            recipients = list.compactMap(\.stringValue)
            guard recipients.count == list.count else { throw HookRefusal(.invalidDocument, "recipients must be user ids.") }
        case (nil, .string(let one)?):
            recipients = [one]
        default:
            throw HookRefusal(.invalidDocument, "Name the recipient: recipientId (a user id) or recipients (a list of user ids).")
        }
        recipients = unique(recipients.filter { $0 != sender })
        guard !recipients.isEmpty, recipients.count <= maxRecipients else {
            throw HookRefusal(.invalidDocument, "A message needs 1 to \(maxRecipients) recipients other than the sender.")
        }
        for id in recipients where try ctx.work.document(in: users, id: id) == nil {
            throw HookRefusal(.invalidDocument, "No user with _id \"\(id)\" to send to.")
        }
        let thread = threadID(sender, recipients)
        if let given = ctx.entity["threadId"], given != .string(thread) {
            throw HookRefusal(.invalidDocument, "threadId must be \"\(thread)\": the participants' ids, sorted and joined by ':'.")
        }
        ctx.entity["senderId"] = .string(sender)
        ctx.entity["recipients"] = .array(recipients.map { .string($0) })
        ctx.entity["threadId"] = .string(thread)
    }

    /// A sent message keeps its sender, recipients, thread and ACL for good:
    /// only its `text` may be edited, with a merge patch, which stamps
    /// `editedAt`. Who may edit (the sender, or an admin) is the write
    /// access already checked before this hook runs.
    static func checkEdit(_ ctx: WriteContext<any DocumentWriting>) throws {
        guard ctx.isPatch else {
            throw HookRefusal(.forbidden, "A sent message cannot be replaced; PATCH {\"text\": …} to edit its text.")
        }
        for (key, value) in ctx.entity {
            switch key {
            case "text":
                guard case .string = value else { throw HookRefusal(.invalidDocument, "text must be a string.") }
            case "_id" where value == ctx.id.map { .string($0) }:
                continue
            default:
                throw HookRefusal(.invalidDocument, "Only a message's text can be edited; \"\(key)\" cannot change.")
            }
        }
        guard ctx.entity["text"] != nil else { throw HookRefusal(.invalidDocument, "Send {\"text\": …} to edit a message.") }
        ctx.entity["editedAt"] = .string(Timestamp.now())
    }

    /// The thread of a conversation: every participant's id, sorted, joined by `:`.
    static func threadID(_ sender: String, _ recipients: [String]) -> String {
        unique([sender] + recipients).sorted().joined(separator: ":")
    }

    static func participants(_ entity: JSONObject) throws -> (String, [String]) {
        guard let sender = entity["senderId"]?.stringValue, let list = entity["recipients"]?.arrayValue else {
            throw HookRefusal(.hookFailed, "messaging.sender did not run before messaging.acl.")
        }
        return (sender, list.compactMap(\.stringValue))
    }

    static func unique(_ ids: [String]) -> [String] {
        var seen = Set<String>()
        return ids.filter { seen.insert($0).inserted }
    }

    /// Creates the thread, or points its `lastMessage` at the new message.
    static func upsertThread(_ ctx: WriteContext<any DocumentWriting>, threads: String, messages: String, services: HookServices?) throws {
        guard let message = ctx.stored, case .string(let messageID)? = message["_id"],
              case .string(let threadID)? = message["threadId"] else { return }
        let (sender, recipients) = try participants(message)
        let members = unique([sender] + recipients).sorted()
        var ref = JSONObject()
        ref["_type"] = .string("ref")
        ref["_collection"] = .string(messages)
        ref["_id"] = .string(messageID)
        let writer = ctx.work
        // Through the hook path like any write (no after hooks of its own: the message's run after its commit).
        func write(_ event: HookEvent, _ entity: JSONObject, isPatch: Bool, previous: JSONObject?, _ body: (JSONObject) throws -> String) throws {
            guard let services else { _ = try body(entity); return }
            _ = try services.run(event, threads, id: threadID, entity: entity, isPatch: isPatch, previous: previous,
                                 requestID: ctx.requestID, scope: .system, writer: writer, pending: HookServices.Pending([]), write: body)
        }
        if let text = try writer.document(in: threads, id: threadID), case .object(let thread) = try JSONParser.parse(text) {
            let acl = thread["_acl"]?.objectValue ?? JSONObject()
            var lists = JSONObject()
            for key in ["read", "write"] {
                let existing = acl[key]?.arrayValue?.compactMap(\.stringValue) ?? []
                lists[key] = .array(unique(existing + members).map { .string($0) })
            }
            var patch = JSONObject()
            patch["lastMessage"] = .object(ref)
            patch["lastMessageAt"] = message["_createdAt"] ?? .null
            patch["_acl"] = .object(lists)
            try write(.beforeUpdate, patch, isPatch: true, previous: thread) { patch in
                try writer.patch(in: threads, id: threadID, patch, scope: .system)
            }
        } else {
            var thread = JSONObject()
            thread["_id"] = .string(threadID)
            thread["participants"] = .array(members.map { .string($0) })
            thread["lastMessage"] = .object(ref)
            thread["lastMessageAt"] = message["_createdAt"] ?? .null
            var acl = JSONObject()
            acl["read"] = .array(members.map { .string($0) })
            acl["write"] = .array(members.map { .string($0) })
            thread["_acl"] = .object(acl)
            // The server makes the thread: the sender is its creator, and its
            // id (the participants') is not limited to the sender's namespace.
            let principal: AccessScope.Principal = ctx.actor.map { .user($0) } ?? .admin
            try write(.beforeCreate, thread, isPatch: false, previous: nil) { thread in
                try writer.insert(into: threads, thread, scope: AccessScope(principal: principal, level: .shared))
            }
        }
    }

    /// One `message.created` event per recipient, when an endpoint wants them.
    /// - Returns: whether events were written.
    static func enqueuePush(_ ctx: WriteContext<any DocumentWriting>, privateFields: [String]) throws -> Bool {
        let writer = ctx.work
        guard let stored = ctx.stored, try writer.hasSubscribers("message.created") else { return false }
        let (sender, recipients) = try participants(stored)
        var message = stored
        message["_acl"] = nil
        var profile = JSONObject()
        if let text = try writer.document(in: users, id: sender), case .object(let user) = try JSONParser.parse(text) {
            profile = user
            for field in privateFields + ["_acl"] { profile[field] = nil }
        } else {
            profile["_id"] = .string(sender)
        }
        for recipient in recipients {
            let devices = try writer.devices(userIDs: [recipient]).map { d -> JSONValue in
                var o = JSONObject()
                o["platform"] = .string(d.platform)
                o["token"] = .string(d.token)
                return .object(o)
            }
            var entry = JSONObject()
            entry["_id"] = .string(recipient)
            entry["devices"] = .array(devices)
            var data = JSONObject()
            data["message"] = .object(message)
            data["sender"] = .object(profile)
            data["recipients"] = .array([.object(entry)])
            try writer.enqueueEvent(type: "message.created", data: data.jsonText)
        }
        return true
    }

    /// One alert per recipient device, straight to APNs/FCM: the sender's
    /// name and the text (or `push.generic_text` with `alert_text: generic`),
    /// grouped by thread, with mutable-content for a service extension. No
    /// badge: Roost does not keep unread counts, and a wrong badge is worse than none.
    /// The sender's private profile fields (`users.private_fields`) never
    /// name them: a private `name` falls back to `username`, then to the generic text.
    /// The sender pays one per recipient from its `rate_limits.push_recipients` budget, before
    /// anything is enqueued (the admin pays nothing): past it the message is refused with 429
    /// and nothing of it stays. Per recipient, not per device: what the sender is charged
    /// never depends on the recipients' devices, rows it may not read.
    static func enqueueAlerts(_ ctx: WriteContext<any DocumentWriting>, push: PushSender, alerts: RoostConfig.Push,
                              privateFields: [String], limits: RequestLimits) throws {
        guard push.isEnabled, let stored = ctx.stored else { return }
        let writer = ctx.work
        let (sender, recipients) = try participants(stored)
        var notification = PushNotification(threadID: stored["threadId"]?.stringValue, mutableContent: true)
        switch alerts.alertText {
        case .generic:
            notification.body = alerts.genericText
        case .full:
            var name: String?
            if let text = try writer.document(in: users, id: sender), case .object(let user) = try JSONParser.parse(text) {
                let shown = { (field: String) in privateFields.contains(field) ? nil : user[field]?.stringValue }
                name = shown("name") ?? shown("username")
            }
            notification.title = name ?? alerts.genericText
            notification.body = stored["text"]?.stringValue ?? alerts.genericText
        }
        var data = JSONObject()
        data["messageId"] = stored["_id"] ?? .null
        data["threadId"] = stored["threadId"] ?? .null
        data["senderId"] = .string(sender)
        notification.data = data
        if !ctx.privileged, let refusal = limits.chargePushRecipients(userID: sender, recipients: recipients.count) {
            throw HookRefusal(passing: refusal)
        }
        for recipient in recipients {
            try push.enqueue(writer, userID: recipient, notification: notification)
        }
    }
}
