-- Create one entity of ten properties (POST, JSON body), valid under bench/collections.py's
-- schema: the same body for the collection with the schema and the one without.
dofile((os.getenv("BENCH_LUA_DIR") or ".") .. "/common.lua")
local path
local headers = { ["Content-Type"] = "application/json" }
local counter = 0
local categories = { "book", "toy", "food", "tool" }
function init(args)
  seed_random()
  path = records_path()
end
function request()
  counter = counter + 1
  local body = string.format(
    '{"name":"item %d","price":%.2f,"qty":%d,"sku":"ABC-%d","email":"u%d@example.com",' ..
    '"created":"2026-11-28T10:%02d:%02dZ","tags":["a%d","b"],"active":%s,"category":"%s","where":[%.5f,%.5f]}',
    counter, math.random() * 100, math.random(0, 50), counter, counter % 1000, math.random(0, 59), math.random(0, 59),
    counter % 7, (counter % 2 == 0) and "true" or "false", categories[math.random(1, 4)],
    math.random() * 20 - 10, math.random() * 20 + 40)
  return wrk.format("POST", path, headers, body)
end
