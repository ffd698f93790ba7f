-- The new-message push, written as a script: what an app team on Kinvey
-- wrote in its business logic. (Roost's built-in messaging.push hook does
-- the same; this shows how an app would add its own.) Each recipient gets
-- a push.notification event through the durable outbox, with their devices.
roost.after("messages", "create", function(ctx)
  local message = ctx.entity
  local sender = roost.get("users", message.senderId)
  local title = (sender and sender.name) or "New message"
  for _, recipient in ipairs(message.recipients or {}) do
    roost.push(recipient, {
      title = title,
      body = string.sub(message.text or "", 1, 140),
      threadId = message.threadId,
    })
  end
end)
