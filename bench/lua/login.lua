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

-- Successes and 503s (roostd's full hash queue answers 503 + Retry-After) are counted
-- apart; common.lua's done() reports them. The client honours Retry-After like a real
-- one would: each 503 owes one pause of Retry-After seconds before a connection's next
-- request (wrk's delay() has no connection context, so the pause goes to the next
-- connection that sends, which keeps the number and length of pauses right).
ok_count, s503_count = 0, 0
local owed = {}
function response(status, headers, body)
  if status < 400 then
    ok_count = ok_count + 1
  elseif status == 503 then
    s503_count = s503_count + 1
    local ra = tonumber(headers["Retry-After"] or headers["retry-after"] or "1") or 1
    owed[#owed + 1] = ra * 1000
  end
end
function delay()
  if #owed == 0 then return 0 end
  return table.remove(owed, 1)
end
