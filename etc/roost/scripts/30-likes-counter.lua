-- A counter kept in the same transaction: a like on a post adds one to the
-- post's `likes`, an unlike takes one away. The liker may not own the post,
-- so the counter is written with the system's rights (roost.as_system);
-- the like itself keeps the caller's. If either write fails, neither stays.
roost.before("likes", "create", function(ctx)
  local postId = ctx.entity.postId
  if type(postId) ~= "string" then
    ctx.refuse(400, "InvalidDocument", "postId must name a post")
  end
  roost.as_system(function()
    local post = roost.get("posts", postId)
    if post == nil then ctx.refuse(404, "NotFound", "No post " .. postId) end
    roost.update("posts", postId, { likes = (post.likes or 0) + 1 })
  end)
end)

roost.before("likes", "delete", function(ctx)
  local postId = ctx.entity.postId
  roost.as_system(function()
    local post = roost.get("posts", postId)
    if post then roost.update("posts", postId, { likes = math.max((post.likes or 1) - 1, 0) }) end
  end)
end)
