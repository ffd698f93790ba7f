-- (c) Create one entity (POST, JSON body; the ack is durable on both servers).
dofile((os.getenv("BENCH_LUA_DIR") or ".") .. "/common.lua")
local path
local headers = { ["Content-Type"] = "application/json" }
local counter = 0
function init(args)
  seed_random()
  path = records_path()
end
function request()
  counter = counter + 1
  local body = string.format(
    '{"category":"c%d","n":%d,"name":"bench %d","location":[%.6f,%.6f]}',
    math.random(0, 99), 1000000 + counter, counter,
    math.random() * 20 - 10, math.random() * 20 + 40)
  return wrk.format("POST", path, headers, body)
end
