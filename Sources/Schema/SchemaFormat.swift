import JSON

/// The `format` keyword. Standard formats Roost asserts check strings only (other
/// types pass); Roost's own two formats check every value. The formats listed in
/// `ignored` are accepted and not checked; any other name is refused when the
/// schema is compiled, so a typo does not silently turn a check off.
enum SchemaFormat {
    case dateTime, date, time, email, uri, uuid
    /// `[longitude, latitude]`, both numbers in range.
    case geoPoint
    /// A document id in a collection (`x-roost-collection`), reported by `JSONSchema.references(in:)`.
    case reference(collection: String)
    /// A standard format Roost accepts without checking it.
    case ignored

    static let asserted = ["date-time", "date", "time", "email", "uri", "uuid"]
    static let ignoredNames = [
        "duration", "hostname", "idn-hostname", "idn-email", "ipv4", "ipv6", "iri", "iri-reference",
        "uri-reference", "uri-template", "json-pointer", "relative-json-pointer", "regex",
    ]
    static let roostNames = ["geo-point", "reference"]

    init?(name: String, collection: String?) {
        switch name {
        case "date-time": self = .dateTime
        case "date": self = .date
        case "time": self = .time
        case "email": self = .email
        case "uri": self = .uri
        case "uuid": self = .uuid
        case "geo-point": self = .geoPoint
        case "reference":
            guard let collection else { return nil }
            self = .reference(collection: collection)
        default:
            guard Self.ignoredNames.contains(name) else { return nil }
            self = .ignored
        }
    }

    /// Nil when `value` is fine, else the violation's message.
    func problem(with value: JSONValue) -> String? {
        switch self {
        case .ignored: return nil
        case .geoPoint: return GeoPointFormat.problem(with: value)
        case .reference(let collection):
            if case .string(let id) = value, !id.isEmpty { return nil }
            // Roost's own reference (what a field declared under `references:` holds).
            if case .object(let o) = value, o["_type"] == .string("ref"), o["_collection"] == .string(collection),
               case .string(let id)? = o["_id"], !id.isEmpty { return nil }
            return "must be a reference into \"\(collection)\" ({\"_type\": \"ref\", \"_collection\": \"\(collection)\", \"_id\": …}) or a document id"
        case .dateTime, .date, .time, .email, .uri, .uuid:
            guard case .string(var text) = value else { return nil }
            return text.withUTF8 { utf8 in
                switch self {
                case .dateTime: return DateTimeFormat.isDateTime(utf8) ? nil : "must be a date-time (RFC 3339, such as 2026-11-28T08:30:00Z)"
                case .date: return DateTimeFormat.isDate(utf8) ? nil : "must be a date (RFC 3339 full-date, YYYY-MM-DD)"
                case .time: return DateTimeFormat.isTime(utf8) ? nil : "must be a time with an offset (RFC 3339, such as 08:30:00Z)"
                case .email: return EmailFormat.isEmail(utf8) ? nil : "must be an e-mail address"
                case .uri: return URIFormat.isURI(Array(utf8)) ? nil : "must be an absolute URI (RFC 3986)"
                default: return UUIDFormat.isUUID(utf8) ? nil : "must be a UUID (8-4-4-4-12 hexadecimal digits)"
                }
            }
        }
    }
}

/// Roost's `geo-point`: what a geo index stores, `[longitude, latitude]`.
enum GeoPointFormat {
    static func problem(with value: JSONValue) -> String? {
        let shape = "must be a geo point [longitude, latitude]"
        guard case .array(let items) = value else { return "\(shape), not \(article(value.typeName))" }
        guard items.count == 2 else { return "\(shape): an array of exactly 2 numbers, not \(items.count)" }
        guard let longitude = items[0].doubleValue, let latitude = items[1].doubleValue else {
            return "\(shape): both must be numbers"
        }
        if !(-180...180).contains(longitude) {
            return "\(shape): longitude \(SchemaNumber.text(items[0])) is outside [-180, 180]"
        }
        if !(-90...90).contains(latitude) {
            return "\(shape): latitude \(SchemaNumber.text(items[1])) is outside [-90, 90]"
                + (abs(latitude) <= 180 && abs(longitude) <= 90 ? " (is it [latitude, longitude]?)" : "")
        }
        return nil
    }

    static func article(_ typeName: String) -> String {
        typeName == "null" ? "null" : typeName == "array" || typeName == "object" ? "an \(typeName)" : "a \(typeName)"
    }
}

/// `uuid`: 8-4-4-4-12 hexadecimal digits, any version and variant.
enum UUIDFormat {
    static func isUUID(_ s: UnsafeBufferPointer<UInt8>) -> Bool {
        guard s.count == 36 else { return false }
        for (i, b) in s.enumerated() {
            if i == 8 || i == 13 || i == 18 || i == 23 {
                guard b == UInt8(ascii: "-") else { return false }
            } else if JSONPointer.hexValue(b) == nil {
                return false
            }
        }
        return true
    }
}
