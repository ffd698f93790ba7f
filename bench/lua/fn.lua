-- (f) GET a Lua function answering a small JSON (/fn/small, bench/roost-scripts/fn).
dofile((os.getenv("BENCH_LUA_DIR") or ".") .. "/common.lua")
function init(args)
  seed_random()
end
function request()
  return wrk.format("GET", "/fn/small?n=" .. math.random(1000))
end
