-- The trivial before hook of the scripts' create benchmark (bench/create_ab.py --target script_hook):
-- a check of one field and a stamped one, on every create of bench's "items".
roost.before("items", "create", function(ctx)
  if type(ctx.entity.n) == "number" and ctx.entity.n < 0 then
    ctx.refuse(400, "InvalidDocument", "n must not be negative")
  end
  ctx.entity.checked = true
end)
