-- A stamped field: every note records who last wrote it and when (UTC),
-- whatever the client sent for those fields.
local function stamp(ctx)
  ctx.entity.stampedBy = ctx.caller.id or "anonymous"
  ctx.entity.stampedAt = os.date("!%Y-%m-%dT%H:%M:%SZ")
end

roost.before("notes", "create", stamp)
roost.before("notes", "update", stamp)
