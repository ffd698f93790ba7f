-- An empty delta: GET /:collection/_deltaset?since=<cursor> with a cursor at the feed's head
-- (BENCH_CURSOR; bench/sync.py passes the cursor its last sync ended at).
dofile((os.getenv("BENCH_LUA_DIR") or ".") .. "/common.lua")
local path
function init(args)
  local cursor = os.getenv("BENCH_CURSOR")
  if not cursor or #cursor == 0 then error("BENCH_CURSOR is not set") end
  path = records_path() .. "/_deltaset?since=" .. urlencode(cursor)
end
function request()
  return wrk.format("GET", path)
end
