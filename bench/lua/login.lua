-- (e) Log in with the right password, as one of BENCH_USERS accounts (bench0..),
-- each request a new session (Argon2id on roostd, bcrypt on PocketBase).
--   roostd:     POST /login {"username":"benchK","password":..}
--   PocketBase: POST /api/collections/users/auth-with-password {"identity":"benchK@example.com",..}
dofile((os.getenv("BENCH_LUA_DIR") or ".") .. "/common.lua")
local reqs = {}
function init(args)
  seed_random()
  local users = tonumber(os.getenv("BENCH_USERS") or "8")
  local password = os.getenv("BENCH_PASSWORD") or "bench-password-123"
  local headers = { ["Content-Type"] = "application/json" }
  for k = 0, users - 1 do
    if api == "roost" then
      reqs[#reqs + 1] = wrk.format("POST", "/login", headers,
        string.format('{"username":"bench%d","password":"%s"}', k, password))
    else
      reqs[#reqs + 1] = wrk.format("POST", "/api/collections/users/auth-with-password", headers,
        string.format('{"identity":"bench%d@example.com","password":"%s"}', k, password))
    end
  end
end
function request() return reqs[math.random(#reqs)] end
