-- (h, i) Serve a stored file, a random one of BENCH_IDS (uploaded before the run).
-- BENCH_SERVE = original | thumb.
--   roostd:     GET /files/<id>                  | GET /files/<id>/thumbnail?size=128 (ready)
--   PocketBase: GET /api/files/photos/<rid>/<fn> | the same with ?thumb=100x100 (already made)
dofile((os.getenv("BENCH_LUA_DIR") or ".") .. "/common.lua")
local paths = {}
function init(args)
  seed_random()
  local thumb = (os.getenv("BENCH_SERVE") or "original") == "thumb"
  local coll = os.getenv("BENCH_FILES_COLLECTION") or "photos"
  for _, id in ipairs(load_ids()) do
    local p
    if api == "roost" then
      p = "/files/" .. id .. (thumb and "/thumbnail?size=128" or "")
    else
      p = "/api/files/" .. coll .. "/" .. id .. (thumb and "?thumb=100x100" or "")
    end
    paths[#paths + 1] = wrk.format("GET", p)
  end
end
function request() return paths[math.random(#paths)] end
