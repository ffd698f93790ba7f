-- Scripts for tests/python/test_rules.py: hooks that run before a create/update rule
-- (the rule sees what they stamp), and /fn/ routes that read and write with the
-- caller's rights (the caller's read rule holds) or as the system.
roost.before("stamped", "create", function(ctx)
  ctx.entity.owner = ctx.caller.id
end)
roost.before("stamped", "update", function(ctx)
  if ctx.entity.handOver then ctx.entity.owner = ctx.entity.handOver end
  if ctx.entity.audit then roost.as_system(function() roost.create("audits", { marker = ctx.entity.audit }) end) end
end)

local function ids(rows)
  local out = {}
  for i, r in ipairs(rows) do out[i] = r._id end
  return out
end

roost.route("GET", "peek", function(req)
  local filter = { seed = req.query.seed }
  return {
    ids = ids(roost.find("posts", filter, { sort = { n = 1 }, limit = 1000 })),
    count = roost.count("posts", filter),
    got = roost.get("posts", req.query.id) ~= nil,
    system = roost.as_system(function() return roost.count("posts", filter) end),
  }
end)

roost.route("POST", "poke", function(req)
  local ok, err = pcall(function() return roost.update("posts", req.body.id, { n = 99 }) end)
  local gone, derr = pcall(function() return roost.delete("posts", req.body.id) end)
  return { updated = ok, err = tostring(err), deleted = gone, derr = tostring(derr) }
end)
