-- Shared by the workload scripts (wrk loads one script; each does
-- dofile(BENCH_LUA_DIR .. "/common.lua")).
-- Environment: BENCH_API = roost | pb, BENCH_IDS = file of ids (one a line),
-- BENCH_COLLECTION (default "items").
-- Each wrk thread gets its own Lua state; setup() gives each a distinct seed.
-- done() prints one machine-readable line that run.sh parses:
--   BENCH_RESULT requests=.. duration_us=.. rps=.. p50_us=.. p90_us=.. p99_us=.. max_us=.. status_errors=.. socket_errors=.. timeouts=..
-- (socket_errors includes the timeouts; timeouts are wrk's --timeout expiries.)
-- A script that defines response() and counts into the per-thread globals ok_count
-- (2xx/3xx) and s503_count (503 Overloaded) also gets ok=.. s503=.. on that line, and
-- rps then counts only the successful responses (a 503 is an answer, not a timeout).

api = os.getenv("BENCH_API") or "roost"
collection = os.getenv("BENCH_COLLECTION") or "items"
if api ~= "roost" and api ~= "pb" then error("BENCH_API must be roost or pb, not " .. api) end

local thread_counter = 0
local threads = {}
function setup(thread)
  thread_counter = thread_counter + 1
  threads[#threads + 1] = thread
  thread:set("thread_seed", thread_counter * 1000003 + os.time())
end

function seed_random()
  math.randomseed(thread_seed or os.time())
  for _ = 1, 10 do math.random() end
end

function urlencode(s)
  return (s:gsub("[^%w%-_%.~]", function(c) return string.format("%%%02X", string.byte(c)) end))
end

function load_ids()
  local file = os.getenv("BENCH_IDS")
  if not file then error("BENCH_IDS is not set") end
  local f = assert(io.open(file, "r"), "cannot open " .. file)
  local ids = {}
  for line in f:lines() do if #line > 0 then ids[#ids + 1] = line end end
  f:close()
  if #ids == 0 then error("no ids in " .. file) end
  return ids
end

-- The base path of the collection's records.
function records_path()
  if api == "roost" then return "/" .. collection end
  return "/api/collections/" .. collection .. "/records"
end

function done(summary, latency, requests)
  local e = summary.errors
  local seconds = summary.duration / 1e6
  local ok, s503, tracked = 0, 0, false
  for _, t in ipairs(threads) do
    local o = t:get("ok_count")
    if o ~= nil then
      tracked = true
      ok = ok + o
      s503 = s503 + (t:get("s503_count") or 0)
    end
  end
  local extra = ""
  local rate = summary.requests / seconds
  if tracked then
    extra = string.format(" ok=%d s503=%d all_rps=%.1f", ok, s503, rate)
    rate = ok / seconds
  end
  io.write(string.format(
    "BENCH_RESULT requests=%d duration_us=%d rps=%.1f p50_us=%d p90_us=%d p99_us=%d max_us=%d status_errors=%d socket_errors=%d timeouts=%d%s\n",
    summary.requests, summary.duration, rate,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max,
    e.status, e.connect + e.read + e.write + e.timeout, e.timeout, extra))
end
