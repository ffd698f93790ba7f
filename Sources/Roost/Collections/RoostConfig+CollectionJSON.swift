import JSON
import Store

extension RoostConfig.Collection {
    /// The settings as the admin API shows them and takes them back: the
    /// shape of a `collections:` entry (`RuntimeCollection.keys`).
    var json: JSONObject {
        var o = JSONObject()
        if let permission { o["permission"] = .string(permission.rawValue) }
        if !indexes.isEmpty { o["indexes"] = .array(indexes.map { .string($0.description) }) }
        if !references.isEmpty {
            var refs = JSONObject()
            for field in references.sorted(by: { $0.field < $1.field }) {
                refs[field.field] = .object(JSONObject([(key: "collection", value: .string(field.target)),
                                                        (key: "on_delete", value: .string(field.onDelete.rawValue))]))
            }
            o["references"] = .object(refs)
        }
        if let rules {
            var r = JSONObject()
            for (name, rule) in [("read", rules.read), ("create", rules.create), ("update", rules.update), ("delete", rules.delete)] {
                if let rule { r[name] = rule.source }
            }
            o["rules"] = .object(r)
        }
        if let schema { o["schema"] = schema.source }
        if pushSync { o["push_sync"] = .bool(true) }
        if onUserDelete != .keep { o["on_user_delete"] = .string(onUserDelete.rawValue) }
        return o
    }
}
