-- A list as a signed-in user sees it (bench/rules.py), on BENCH_COLLECTION:
--   BENCH_SHAPE=plain:    ?limit=50
--   BENCH_SHAPE=category: ?query={"category":"cK"}&limit=50&count=true (100 categories)
-- The token comes in wrk's -H "Authorization: Bearer …".
dofile((os.getenv("BENCH_LUA_DIR") or ".") .. "/common.lua")
local paths = {}
function init(args)
  seed_random()
  local shape = os.getenv("BENCH_SHAPE") or "plain"
  if shape == "plain" then
    paths[1] = "/" .. collection .. "?limit=50"
  else
    for k = 0, 99 do
      paths[#paths + 1] = "/" .. collection .. "?query=" .. urlencode('{"category":"c' .. k .. '"}') .. "&limit=50&count=true"
    end
  end
end
function request()
  return wrk.format("GET", paths[math.random(#paths)])
end
