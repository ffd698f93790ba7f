-- Validation: a product's price must be a number >= 0. A refused write
-- answers 400 InvalidDocument and nothing the request did is kept.
local function check_price(ctx)
  local price = ctx.entity.price
  if price == nil and ctx.event == "update" then return end -- a patch that leaves price alone
  if type(price) ~= "number" or price < 0 then
    ctx.refuse(400, "InvalidDocument", "price must be a number >= 0")
  end
end

roost.before("products", "create", check_price)
roost.before("products", "update", check_price)
