-- Test scripts for tests/python/test_scripts.py: every roost.* call, run from
-- a before hook on "probes" (op names the call), a function or an after hook.
roost.before("probes", "create", function(ctx)
  local e = ctx.entity
  local op = e.op
  if op == "get" then e.got = roost.get(e.collection, e.id) or roost.null
  elseif op == "get_system" then e.got = roost.as_system(function() return roost.get(e.collection, e.id) end) or roost.null
  elseif op == "find" then e.found = roost.find(e.collection, e.filter, { sort = e.sort, limit = e.limit })
  elseif op == "find_system" then e.found = roost.as_system(function() return roost.find(e.collection, e.filter) end)
  elseif op == "count" then e.counted = roost.count(e.collection, e.filter)
  elseif op == "create" then e.made = roost.create(e.collection, e.doc)
  elseif op == "create_system" then e.made = roost.as_system(function() return roost.create(e.collection, e.doc) end)
  elseif op == "update" then e.made = roost.update(e.collection, e.id, e.doc)
  elseif op == "delete" then e.deleted = roost.delete(e.collection, e.id)
  elseif op == "env" then e.env = roost.env("ROOST_TEST_GREETING"); e.home = roost.env("HOME") or "hidden"
  elseif op == "log" then roost.log.warn("probe log line", { marker = e.marker })
  elseif op == "webhook" then roost.webhook("probe.fired", { marker = e.marker })
  elseif op == "caller" then e.caller = ctx.caller; e.request_id = ctx.request_id
  elseif op == "http" then local ok, err = pcall(roost.http, "GET", "http://127.0.0.1/"); e.http = tostring(err)
  elseif op == "audit" then roost.create("audits", { marker = e.marker })
  elseif op == "audit_then_refuse" then
    roost.create("audits", { marker = e.marker })
    ctx.refuse(409, "Conflict", "refused after writing")
  elseif op == "audit_then_error" then
    roost.create("audits", { marker = e.marker })
    error("boom")
  elseif op == "caught" then
    local ok, err = pcall(roost.update, "audits", "no-such-id", { x = 1 })
    e.caught = tostring(err)
  elseif op == "uncaught" then roost.update("audits", "no-such-id", { x = 1 })
  end
  e.op = nil
end)

roost.before("probes", "update", function(ctx)
  ctx.entity.previousText = ctx.previous and ctx.previous.text or roost.null
end)

-- Hooks on users: a profile update is refused or stamped like any collection's.
roost.before("users", "update", function(ctx)
  if ctx.entity.nickname == "refuse-me" then ctx.refuse(422, "NicknameTaken", "pick another nickname") end
  if ctx.entity.nickname then ctx.entity.nicknameBy = ctx.caller.id end
end)

-- Recursion: each create creates another, until the depth limit refuses.
roost.before("recurse", "create", function(ctx) roost.create("recurse", { n = (ctx.entity.n or 0) + 1 }) end)

roost.after("probes", "create", function(ctx)
  roost.as_system(function()
    roost.create("afters", { probe = ctx.entity._id, caller = ctx.caller.id or "anonymous" })
  end)
end)

roost.after("*", "login", function(ctx)
  roost.as_system(function() roost.create("logins", { user = ctx.entity._id }) end)
end)

roost.route("POST", "echo", function(req)
  return 201, { body = req.body, caller = req.caller, query = req.query }
end)

roost.route("GET", "count-audits", function(req)
  return { n = roost.count("audits", { marker = req.query.marker }) }
end)

roost.route("POST", "two-writes", function(req)
  roost.transaction(function()
    roost.create("audits", { marker = req.body.marker })
    if req.body.fail then error("after the first write") end
    roost.create("audits", { marker = req.body.marker })
  end)
  return { ok = true }
end)

roost.route("POST", "bad-return", function(req) return function() end end)
roost.route("POST", "http-denied", function(req)
  local ok, err = pcall(roost.http, "GET", "http://127.0.0.1:1/")
  return { err = tostring(err) }
end)

roost.route("POST", "fetch", function(req)
  local ok, r = pcall(roost.http, "POST", req.body.url, { body = { hello = "world" }, headers = { ["X-Test"] = "yes" }, timeout = 1000 })
  if not ok then return 502, { error = "Upstream", description = tostring(r) } end
  return { status = r.status, json = r.json }
end)
