-- (d) roostd only: $geoWithin $box of BENCH_BOX degrees (default 0.5) at a
-- random place inside the seeded area (lng -10..10, lat 40..60), 50 per page.
dofile((os.getenv("BENCH_LUA_DIR") or ".") .. "/common.lua")
local base, side
function init(args)
  seed_random()
  if api ~= "roost" then error("geo.lua is for roostd only") end
  base = records_path() .. "?limit=50&query="
  side = tonumber(os.getenv("BENCH_BOX") or "0.5")
end
function request()
  local x0 = math.random() * (20 - side) - 10
  local y0 = math.random() * (20 - side) + 40
  local q = string.format('{"location":{"$geoWithin":{"$box":[[%.4f,%.4f],[%.4f,%.4f]]}}}', x0, y0, x0 + side, y0 + side)
  return wrk.format("GET", base .. urlencode(q))
end
