-- A nightly clean-up job: at 03:00 UTC, stories past their expiresAt go.
-- Once per night across every node sharing a PostgreSQL database; a night
-- missed while the daemon was down runs once at the next start.
roost.cron("0 3 * * *", function()
  local now = os.date("!%Y-%m-%dT%H:%M:%SZ")
  local removed = 0
  roost.as_system(function()
    repeat
      local expired = roost.find("stories", { expiresAt = { ["$lt"] = now } }, { limit = 100 })
      for _, story in ipairs(expired) do
        roost.delete("stories", story._id)
        removed = removed + 1
      end
    until #expired < 100
  end)
  roost.log.info("nightly clean-up", { removed = removed })
end)
