-- The console test's script (tests/python/test_console.py): one hook and one function for the Hooks page.
roost.before("console_probes", "create", function(ctx) ctx.entity.seen = true end)
roost.route("GET", "console-ping", function(req) return { pong = true } end)
