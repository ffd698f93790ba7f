-- ID-token sign-in: POST /auth/idtoken {"provider":"acme","id_token":..,"nonce":..}
-- with tokens from BENCH_IDS (one a line, minted by bench/accounts.py). Each
-- token signs in once, so each wrk thread takes its own slice of the file in
-- order (BENCH_THREADS slices); counted as in login.lua (ok vs 503).
dofile((os.getenv("BENCH_LUA_DIR") or ".") .. "/common.lua")
local tokens, next_index, last_index = nil, 1, 0
local base_setup, slices_made = setup, 0
function setup(thread)
  base_setup(thread)
  slices_made = slices_made + 1
  thread:set("slice", slices_made)
end
local headers = { ["Content-Type"] = "application/json" }
local nonce = os.getenv("BENCH_NONCE") or "bench-nonce"
function init(args)
  local all = load_ids()
  local slices = tonumber(os.getenv("BENCH_THREADS") or "2")
  local index = ((slice or 1) - 1) % slices
  local per = math.floor(#all / slices)
  tokens = all
  next_index = index * per + 1
  last_index = next_index + per - 1
end
function request()
  local t = tokens[next_index]
  if next_index < last_index then next_index = next_index + 1 end
  return wrk.format("POST", "/auth/idtoken", headers,
    string.format('{"provider":"acme","id_token":"%s","nonce":"%s"}', t, nonce))
end
ok_count, s503_count = 0, 0
function response(status, headers, body)
  if status < 400 then ok_count = ok_count + 1 elseif status == 503 then s503_count = s503_count + 1 end
end
