import JSON
import Store

/// MongoDB's path rules evaluated in Swift, for building index entries.
///
/// These mirror `FilterCompiler.anyValue` (and `SQLDialect.walk`) exactly: an index entry exists for
/// a value if and only if the compiled SQL would consider that value.
enum PathValues {
    /// The values a condition on `path` looks at in `document`.
    static func candidates(in document: JSONObject, path: [String]) -> [JSONValue] {
        var out: [JSONValue] = []
        guard let first = path.first else { return out }
        collect(document[first], path.dropFirst(), into: &out)
        return out
    }

    private static func collect(_ value: JSONValue?, _ path: ArraySlice<String>, into out: inout [JSONValue]) {
        guard let value else { return }
        guard let key = path.first else {
            out.append(value)
            if case .array(let elements) = value { out.append(contentsOf: elements) }
            return
        }
        let rest = path.dropFirst()
        switch value {
        case .object(let o):
            collect(o[key], rest, into: &out)
        case .array(let elements):
            for case .object(let o) in elements { collect(o[key], rest, into: &out) }
            if FieldPath.isArrayIndex(key), let i = Int(key), i < elements.count {
                // A value reached by position at the end of the path is not expanded.
                if rest.isEmpty { out.append(elements[i]) } else { collect(elements[i], rest, into: &out) }
            }
        default:
            return
        }
    }

    /// True when following `path` meets an array anywhere, the final value
    /// included: the path's index is then multikey.
    static func reachesArray(in document: JSONObject, path: [String]) -> Bool {
        func walk(_ value: JSONValue?, _ rest: ArraySlice<String>) -> Bool {
            switch value {
            case .array?: return true
            case .object(let o)?: return rest.first.map { walk(o[$0], rest.dropFirst()) } ?? false
            default: return false
            }
        }
        guard let first = path.first else { return false }
        return walk(document[first], path.dropFirst())
    }

    /// The point at `path` (object keys only), as `[lng, lat, …]` or a GeoJSON Point.
    static func point(in document: JSONObject, path: [String]) -> (Double, Double)? {
        var current: JSONValue = .object(document)
        for key in path {
            guard case .object(let o) = current, let next = o[key] else { return nil }
            current = next
        }
        let coordinates: [JSONValue]?
        switch current {
        case .array(let a): coordinates = a
        case .object(let o): coordinates = o["coordinates"]?.arrayValue
        default: coordinates = nil
        }
        guard let c = coordinates, c.count >= 2, let x = c[0].doubleValue, let y = c[1].doubleValue else { return nil }
        return (x, y)
    }
}
