import JSON

/// The first pass over a schema document: which base URI is in effect at every
/// schema location, and where each `$id` resource and `$anchor` is, so `$ref`
/// can be resolved before anything is compiled. Iterative, so a deep schema
/// meets the depth limit, not the stack's end.
struct SchemaIndex {
    /// Absolute URI (no fragment) of each resource → its JSON Pointer in the document.
    var resources: [String: String] = [:]
    /// "uri#anchor" → JSON Pointer.
    var anchors: [String: String] = [:]
    /// JSON Pointer of each schema location → the base URI in effect there.
    var bases: [String: SchemaURI] = [:]

    /// The base URI of a schema without an `$id`: nothing outside can name it.
    static let defaultBase = "urn:roost:schema"

    init(root: JSONValue, maxDepth: Int) throws(SchemaError) {
        var stack: [(value: JSONValue, pointer: String, base: SchemaURI, depth: Int)] = [(root, "", SchemaURI(parsing: Self.defaultBase), 0)]
        resources[Self.defaultBase] = ""
        while let (value, pointer, inherited, depth) = stack.popLast() {
            guard depth <= maxDepth else {
                throw .invalid(pointer: pointer, message: "the schema nests subschemas more than \(maxDepth) levels deep")
            }
            var base = inherited
            switch value {
            case .bool:
                bases[pointer] = base
                continue
            case .object(let object):
                if case .string(let id)? = object["$id"] {
                    let resolved = base.resolving(id)
                    if let fragment = resolved.fragment, !fragment.isEmpty {
                        throw .invalid(pointer: pointer + "/$id", message: "$id must not have a fragment; name a place with $anchor")
                    }
                    base = resolved.withoutFragment
                    let key = base.text
                    if let other = resources[key], other != pointer, !(other == "" && key == Self.defaultBase) {
                        throw .invalid(pointer: pointer + "/$id", message: "$id \"\(key)\" is already used at \"\(other)\"")
                    }
                    resources[key] = pointer
                }
                bases[pointer] = base
                if case .string(let anchor)? = object["$anchor"] {
                    guard Self.isAnchorName(anchor) else {
                        throw .invalid(pointer: pointer + "/$anchor", message: "\"\(anchor)\" is not a valid $anchor name")
                    }
                    let key = base.text + "#" + anchor
                    if anchors[key] != nil {
                        throw .invalid(pointer: pointer + "/$anchor", message: "$anchor \"\(anchor)\" is defined twice in the same resource")
                    }
                    anchors[key] = pointer
                }
                for (key, member) in object.members.reversed() {
                    let memberPointer = pointer + "/" + JSONPointer.escape(key)
                    switch SchemaVocabulary.kind(of: key) {
                    case .schema?:
                        stack.append((member, memberPointer, base, depth + 1))
                    case .schemaArray?:
                        guard case .array(let items) = member else { continue }
                        for (i, item) in items.enumerated().reversed() {
                            stack.append((item, memberPointer + "/\(i)", base, depth + 1))
                        }
                    case .schemaMap?:
                        guard case .object(let map) = member else { continue }
                        for (name, item) in map.members.reversed() {
                            stack.append((item, memberPointer + "/" + JSONPointer.escape(name), base, depth + 1))
                        }
                    default:
                        continue
                    }
                }
            default:
                throw .invalid(pointer: pointer, message: "a schema must be an object or a boolean, not \(GeoPointFormat.article(value.typeName))")
            }
        }
    }

    /// `$anchor`'s grammar: a letter or "_", then letters, digits, "-", "_", ".".
    static func isAnchorName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, first.isASCII,
              first.properties.isAlphabetic || first == "_" else { return false }
        return name.unicodeScalars.allSatisfy {
            $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "-" || $0 == "_" || $0 == ".")
        }
    }

    /// The JSON Pointer a `$ref` written at a place with base `base` points at.
    func target(of reference: String, base: SchemaURI, at pointer: String) throws(SchemaError) -> String {
        let uri = base.resolving(reference)
        let resourceKey = uri.withoutFragment.text
        guard let resource = resources[resourceKey] else {
            throw .invalid(pointer: pointer, message: "$ref \"\(reference)\" points outside this schema (\(resourceKey)); remote references are not supported")
        }
        guard let fragment = JSONPointer.percentDecoded(uri.fragment ?? "") else {
            throw .invalid(pointer: pointer, message: "$ref \"\(reference)\" has a bad %-escape")
        }
        if fragment.isEmpty { return resource }
        if fragment.hasPrefix("/") {
            guard let tokens = JSONPointer.tokens(fragment) else {
                throw .invalid(pointer: pointer, message: "$ref \"\(reference)\" has a malformed JSON Pointer")
            }
            return resource + tokens.map { "/" + JSONPointer.escape($0) }.joined()
        }
        guard let anchored = anchors[resourceKey + "#" + fragment] else {
            throw .invalid(pointer: pointer, message: "$ref \"\(reference)\": no $anchor \"\(fragment)\" in this schema")
        }
        return anchored
    }
}
