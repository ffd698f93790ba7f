import JSON
import Schema

/// A collection's JSON Schema (`collections.<name>.schema`, docs/SCHEMAS.md)
/// on every document a write would store: creates, replacements, merge
/// patches (after the merge), batches, scripts and hooks' writes alike,
/// since both engines call it at the change itself. The schema describes the
/// client's fields: Roost's own top-level members (`_id`, `_acl`,
/// `_createdAt`, `_updatedAt`, any `_`-prefixed name) are left out.
public enum SchemaCheck {
    public static func check(_ document: JSONObject, in collection: String, schema: JSONSchema?) throws {
        guard let schema else { return }
        let fields = document.filter(keys: { $0.utf8.first != UInt8(ascii: "_") })
        let violations = schema.validate(.object(fields))
        guard violations.isEmpty else { throw StoreError.schemaViolation(collection: collection, violations) }
    }
}
