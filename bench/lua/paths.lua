-- Any GET workload: each request is a random line of the file BENCH_PATHS (one
-- request path with its query string a line, already URL-encoded). bench/scale.py
-- writes one such file per query shape and server.
dofile((os.getenv("BENCH_LUA_DIR") or ".") .. "/common.lua")
local paths = {}
function init(args)
  seed_random()
  local file = os.getenv("BENCH_PATHS")
  if not file then error("BENCH_PATHS is not set") end
  local f = assert(io.open(file, "r"), "cannot open " .. file)
  for line in f:lines() do if #line > 0 then paths[#paths + 1] = line end end
  f:close()
  if #paths == 0 then error("no paths in " .. file) end
end
function request()
  return wrk.format("GET", paths[math.random(#paths)])
end
