-- The function of the scripts' /fn/ benchmark (bench/create_ab.py --target script_fn, bench/lua/fn.lua):
-- a small JSON answer from the query, beside a GET of an item by id.
roost.route("GET", "small", function(req)
  return { ok = true, n = tonumber(req.query.n) or 0, at = os.time() }
end)
