-- A custom function: GET /fn/nearby-summary?lng=..&lat=..&km=.. answers how
-- many places the caller can see within km of the point, the nearest few,
-- and their average rating. Reads run with the caller's rights.
roost.route("GET", "nearby-summary", function(req)
  local lng, lat = tonumber(req.query.lng), tonumber(req.query.lat)
  local km = tonumber(req.query.km) or 5
  if not lng or not lat or km <= 0 or km > 100 then
    return 400, { error = "InvalidQuery", description = "give lng, lat and km (0 to 100)" }
  end
  local near = { location = { ["$nearSphere"] = {
    ["$geometry"] = { type = "Point", coordinates = { lng, lat } },
    ["$maxDistance"] = km * 1000 } } }
  local places = roost.find("places", near, { limit = 50 })
  local names, total = {}, 0
  for i, place in ipairs(places) do
    if i <= 3 then names[#names + 1] = place.name end
    total = total + (place.rating or 0)
  end
  return {
    count = #places,
    nearest = roost.array(names),
    averageRating = #places > 0 and total / #places or roost.null,
  }
end)
