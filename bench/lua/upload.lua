-- (f) Upload one 200 KB JPEG (BENCH_FILE), acknowledged when durable.
--   roostd:     POST /files, the raw bytes, Content-Type: image/jpeg (201 after the file
--               is fsynced and its row committed)
--   PocketBase: POST /api/collections/<BENCH_FILES_COLLECTION>/records, multipart/form-data
--               with the file in the field "image" (200 after the record is created)
dofile((os.getenv("BENCH_LUA_DIR") or ".") .. "/common.lua")
local req
function init(args)
  local file = os.getenv("BENCH_FILE") or error("BENCH_FILE is not set")
  local f = assert(io.open(file, "rb"), "cannot open " .. file)
  local jpeg = f:read("*a")
  f:close()
  if api == "roost" then
    req = wrk.format("POST", "/files", { ["Content-Type"] = "image/jpeg" }, jpeg)
  else
    local boundary = "----roostbenchboundary7f3a9c"
    local body = "--" .. boundary .. "\r\n" ..
      'Content-Disposition: form-data; name="image"; filename="bench.jpg"\r\n' ..
      "Content-Type: image/jpeg\r\n\r\n" .. jpeg .. "\r\n--" .. boundary .. "--\r\n"
    req = wrk.format("POST", "/api/collections/" .. (os.getenv("BENCH_FILES_COLLECTION") or "photos") .. "/records",
      { ["Content-Type"] = "multipart/form-data; boundary=" .. boundary }, body)
  end
end
function request() return req end
