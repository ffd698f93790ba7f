import Foundation
import JSON
import Jobs

/// The served `/openapi.yaml`: the checked-in document with a model per
/// collection that has a JSON Schema (`<Name>Document` under
/// `components.schemas`), so a generated client gets typed models. Each
/// schema is written in JSON, which YAML reads as a flow mapping; its own
/// `$ref`s ("#/…") are pointed at its place in the document. Built on the
/// loop, once per settings snapshot (`generation`) and audience, so a
/// request costs a look-up, never a serialisation of every schema.
final class OpenAPIWithSchemas: Sendable {
    private let base: [UInt8]
    /// By settings generation and audience (every collection's models, or public ones').
    private let cache = LockedBox<[Bool: (generation: Int, bytes: [UInt8])]>([:])

    init(base: [UInt8]) { self.base = base }

    func bytes(_ schemas: [String: CollectionSchema], generation: Int, everything: Bool) -> [UInt8] {
        if let cached = cache.get()[everything], cached.generation == generation { return cached.bytes }
        let bytes = build(schemas)
        cache.update { $0[everything] = (generation, bytes) }
        return bytes
    }

    private func build(_ schemas: [String: CollectionSchema]) -> [UInt8] {
        guard !schemas.isEmpty else { return base }
        let text = String(decoding: base, as: UTF8.self)
        guard let anchor = text.range(of: "\n  schemas:\n") else { return base }
        var models = ""
        for name in schemas.keys.sorted() {
            let model = Self.modelName(name)
            let schema = Self.rebased(schemas[name]!.source, to: "#/components/schemas/\(model)")
            models += "    \(model):  # collection \(name) (documents also carry _id, _acl, _createdAt and _updatedAt)\n"
            models += "      \(schema.jsonText)\n"
        }
        return Array((String(text[..<anchor.upperBound]) + models + String(text[anchor.upperBound...])).utf8)
    }

    /// `pets` → `PetsDocument` (component names are letters, digits, `-`, `_` and `.`).
    static func modelName(_ collection: String) -> String {
        let safe = String(collection.unicodeScalars.map { CharacterSet.alphanumerics.contains($0) || $0 == "_" || $0 == "-" ? Character($0) : "_" })
        return safe.prefix(1).uppercased() + safe.dropFirst() + "Document"
    }

    /// `$ref: "#/…"` inside a schema points at the schema's root; in the document it is `root` + "/…".
    static func rebased(_ value: JSONValue, to root: String) -> JSONValue {
        switch value {
        case .object(let o):
            var out = JSONObject()
            for (k, v) in o {
                if k == "$ref", case .string(let ref) = v, ref.hasPrefix("#") { out[k] = .string(root + ref.dropFirst()) } else { out[k] = rebased(v, to: root) }
            }
            return .object(out)
        case .array(let a): return .array(a.map { rebased($0, to: root) })
        default: return value
        }
    }
}
