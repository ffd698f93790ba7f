/// Which keywords Roost knows and how each holds subschemas: the one table both
/// the index pass (`SchemaIndex`) and the compiler (`SchemaCompiler`) read.
enum SchemaVocabulary {
    enum Kind {
        /// The value is a schema (`not`, `items`, …).
        case schema
        /// An array of schemas (`allOf`, `prefixItems`, …).
        case schemaArray
        /// An object whose values are schemas (`properties`, `$defs`, …).
        case schemaMap
        /// A keyword with a plain value (`type`, `minimum`, …).
        case value
        /// Accepted and ignored (`title`, `description`, …).
        case annotation
    }

    static let kinds: [String: Kind] = [
        "$schema": .value, "$id": .value, "$anchor": .value, "$ref": .value, "$comment": .annotation,
        "$defs": .schemaMap, "definitions": .schemaMap,
        "title": .annotation, "description": .annotation, "examples": .annotation, "default": .annotation,
        "deprecated": .annotation, "readOnly": .annotation, "writeOnly": .annotation,
        "contentMediaType": .annotation, "contentEncoding": .annotation, "contentSchema": .annotation,
        "type": .value, "enum": .value, "const": .value,
        "minimum": .value, "maximum": .value, "exclusiveMinimum": .value, "exclusiveMaximum": .value, "multipleOf": .value,
        "minLength": .value, "maxLength": .value, "pattern": .value, "format": .value,
        "items": .schema, "prefixItems": .schemaArray, "contains": .schema, "minContains": .value, "maxContains": .value,
        "minItems": .value, "maxItems": .value, "uniqueItems": .value,
        "properties": .schemaMap, "patternProperties": .schemaMap, "additionalProperties": .schema,
        "required": .value, "minProperties": .value, "maxProperties": .value, "propertyNames": .schema,
        "dependentRequired": .value, "dependentSchemas": .schemaMap,
        "allOf": .schemaArray, "anyOf": .schemaArray, "oneOf": .schemaArray, "not": .schema,
        "if": .schema, "then": .schema, "else": .schema,
        "x-roost-collection": .value,
    ]

    /// Keywords refused with the reason (draft 2020-12 features Roost does not
    /// implement, and older drafts' spellings whose meaning changed).
    static let refused: [String: String] = [
        "$dynamicRef": "$dynamicRef is not supported",
        "$dynamicAnchor": "$dynamicAnchor is not supported",
        "$recursiveRef": "$recursiveRef (draft 2019-09) is not supported",
        "$recursiveAnchor": "$recursiveAnchor (draft 2019-09) is not supported",
        "unevaluatedProperties": "unevaluatedProperties is not supported; use additionalProperties",
        "unevaluatedItems": "unevaluatedItems is not supported; use items",
        "$vocabulary": "$vocabulary (custom meta-schemas) is not supported",
        "additionalItems": "additionalItems is from older drafts; in 2020-12 use prefixItems and items",
        "dependencies": "dependencies is from older drafts; use dependentRequired or dependentSchemas",
    ]

    /// The `$schema` values accepted (draft 2020-12 only).
    static let dialects: Set<String> = [
        "https://json-schema.org/draft/2020-12/schema", "https://json-schema.org/draft/2020-12/schema#",
    ]

    /// The kind of `keyword`, nil when it is unknown. Keywords starting with "x-"
    /// are extensions, accepted as annotations.
    static func kind(of keyword: String) -> Kind? {
        if let kind = kinds[keyword] { return kind }
        return keyword.hasPrefix("x-") ? .annotation : nil
    }
}
