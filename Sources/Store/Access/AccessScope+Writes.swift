import JSON

/// The configured `create`, `update` and `delete` rules, checked in memory
/// on the document as it would be stored. Both engines call these at the
/// change itself (`NewDocument`, the update and the delete of a row), after
/// the before-hooks ran, so every path that writes with a caller's rights
/// (requests, `/_batch`, scripts) meets the same rules. Without such a rule
/// the level decides, in the engines' SQL (`writeRule`), as it always did.
extension AccessScope {
    /// A new document, as it would be stored (its `_id`, `_acl` and the
    /// before-hooks' changes included), against the `create` rule.
    public func checkCreate(document: JSONObject) throws(Denial) {
        guard principal != .admin, let create = rules?.create else { return }
        guard let rule = create.ruleFilter(for: caller), rule.matches(document) else { throw refusal("create") }
    }

    /// A change of the stored document `stored` into `updated`. The
    /// `update` rule must hold on both (so `{"owner": "@caller.id"}` both
    /// limits who edits and keeps them from handing the row to someone
    /// else), with `@previous.*` reading `stored` each time.
    public func checkUpdate(stored: JSONObject, updated: JSONObject) throws(Denial) {
        guard principal != .admin else { return }
        if let update = rules?.update {
            // Resolved for this change (`@previous.*`), so not from the per-caller memo.
            guard let filter = update.resolve(for: caller, previous: .object(stored)), let matcher = try? FilterMatcher(filter),
                  matcher.matches(.object(stored)), matcher.matches(.object(updated)) else { throw refusal("update") }
        } else if writesByRule {
            try checkLevelWrite(stored)
        }
    }

    /// The deletion of the stored document `stored`, against the `delete` rule.
    public func checkDelete(stored: JSONObject) throws(Denial) {
        guard principal != .admin else { return }
        if let delete = rules?.delete {
            guard let rule = delete.ruleFilter(for: caller), rule.matches(stored) else { throw refusal("delete") }
        } else if writesByRule {
            try checkLevelWrite(stored)
        }
    }

    /// The level's write rule, in memory: for an operation with no rule of
    /// its own when another one took the SQL check over (`writesByRule`).
    private func checkLevelWrite(_ stored: JSONObject) throws(Denial) {
        let rule = Self.levelWriteRule(principal, level, roles: roles)
        guard Self.holds(rule, on: stored) else {
            if principal == .anonymous { throw .signInRequired }
            throw .forbidden("You may read this document but not change it.")
        }
    }
}

extension AccessScope {
    /// The deletion of file `id`, judged from its row as the engine read it:
    /// 404 when the caller may not see it, 403 when the level lets them see
    /// but not change it, then the `delete` rule on its metadata document.
    public func checkFileDelete(id: String, visible: Bool, writable: Bool, document text: String) throws {
        guard visible else { throw StoreError.notFound("No file with _id \"\(id)\".") }
        guard writable else { throw StoreError.forbidden("You may read this file but not delete it.") }
        guard rules?.delete != nil || writesByRule else { return }
        guard case .object(let stored)? = try? JSONParser.parse(text) else { throw StoreError.notFound("No file with _id \"\(id)\".") }
        try checkDelete(stored: stored)
    }
}
