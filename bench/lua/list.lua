-- (b) List with an equality filter on the indexed field `category`
-- (100 values, ~1% of the rows each), 50 per page, with the total count.
--   roostd:     ?query={"category":"cK"}&limit=50&count=true   (X-Total-Count)
--   PocketBase: ?filter=category="cK"&perPage=50             (totalItems)
dofile((os.getenv("BENCH_LUA_DIR") or ".") .. "/common.lua")
local paths = {}
function init(args)
  seed_random()
  local categories = tonumber(os.getenv("BENCH_CATEGORIES") or "100")
  for k = 0, categories - 1 do
    local c = "c" .. k
    if api == "roost" then
      paths[#paths + 1] = records_path() .. "?query=" .. urlencode('{"category":"' .. c .. '"}') .. "&limit=50&count=true"
    else
      paths[#paths + 1] = records_path() .. "?filter=" .. urlencode('category="' .. c .. '"') .. "&perPage=50"
    end
  end
end
function request()
  return wrk.format("GET", paths[math.random(#paths)])
end
