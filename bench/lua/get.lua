-- (a) GET one entity by a random seeded id.
dofile((os.getenv("BENCH_LUA_DIR") or ".") .. "/common.lua")
local ids, base
function init(args)
  seed_random()
  ids = load_ids()
  base = records_path() .. "/"
end
function request()
  return wrk.format("GET", base .. ids[math.random(#ids)])
end
