-- Hostile scripts: each before hook on "hostile" runs the attack its entity names.
local attacks = {
  loop = function() while true do end end,
  pcall_loop = function() while true do pcall(function() while true do end end) end end,
  memory = function() local t = {} for i = 1, 1e9 do t[i] = { i } end end,
  rep = function() return string.rep("x", 1e10) end,
  recursion = function() local function f(n) return 1 + f(n + 1) end return f(1) end,
  pattern = function() return string.find(string.rep("a", 60000), ".-.-.-.-.-.-b") end,
  optional_pattern = function() return string.find(string.rep("a", 30), string.rep("a?", 30) .. string.rep("a", 30)) end,
  empty_rep = function() local s = string.rep("", math.maxinteger) error("an empty rep came back: " .. #s) end,
  move = function() return table.move({}, 1, 1e12, 2) end,
  tail = function() local function f() return f() end return f() end,
  pcall_error = function() while true do local ok = pcall(error, "x") end end,
  index_loop = function()
    local t = setmetatable({}, { __index = function(t, k) return t[k] end })
    while true do pcall(function() return t.x end) end
  end,
  xpcall_loop = function()
    xpcall(function() while true do end end, function() while true do end end)
    while true do end
  end,
  io = function() return io.open("/etc/passwd") end,
  execute = function() return os.execute("touch /tmp/roost-script-escaped") end,
  load = function() return load("return 1")() end,
  dump = function() return string.dump(function() end) end,
  debug = function() return debug.getregistry() end,
  metatable = function() getmetatable("").__index.rep = nil end,
  gc = function() setmetatable({}, { __gc = function() while true do end end }) end,
  roost_table = function() roost.get = nil end,
  require = function() return require("io") end,
}

roost.before("hostile", "create", function(ctx)
  attacks[ctx.entity.attack]()
end)

roost.route("POST", "spin", function(req) while true do end end)
