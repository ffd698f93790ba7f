/// A JSON value that keeps object keys in the order they were written.
///
/// Order matters to Roost: a sort spec such as `{"name":1,"_createdAt":-1}` is
/// an ordered list of keys, and MongoDB compares embedded documents field by
/// field in order. Numbers keep the integer/float distinction so that large
/// integer ids survive a round trip.
public enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)

    /// True for `.int` and `.double`.
    public var isNumber: Bool {
        switch self {
        case .int, .double: return true
        default: return false
        }
    }

    /// The numeric value as a `Double`, or nil when this is not a number.
    public var doubleValue: Double? {
        switch self {
        case .int(let i): return Double(i)
        case .double(let d): return d
        default: return nil
        }
    }

    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    public var objectValue: JSONObject? {
        if case .object(let o) = self { return o }
        return nil
    }

    public var arrayValue: [JSONValue]? {
        if case .array(let a) = self { return a }
        return nil
    }

    /// A short name of the JSON type, for error messages.
    public var typeName: String {
        switch self {
        case .null: return "null"
        case .bool: return "boolean"
        case .int, .double: return "number"
        case .string: return "string"
        case .array: return "array"
        case .object: return "object"
        }
    }
}

/// A JSON object: an ordered list of members with unique keys.
///
/// Writing a key that is already there replaces its value in place (so a
/// parsed object with a duplicate key keeps the first position and the last
/// value). Past `indexThreshold` members a hashed index of positions sits
/// beside the list, so lookups and writes cost O(1) and parsing an object
/// of n keys costs O(n), not O(n²); small objects keep a linear scan.
public struct JSONObject: Sendable, Equatable, Sequence {
    public private(set) var members: [(key: String, value: JSONValue)]
    /// Each key's position in `members`, once there are more than `indexThreshold`.
    private var positions: [String: Int]?
    static let indexThreshold = 16

    public init(_ members: [(key: String, value: JSONValue)] = []) {
        self.members = []
        self.members.reserveCapacity(members.count)
        for m in members { self[m.key] = m.value }
    }

    public var count: Int { members.count }
    public var isEmpty: Bool { members.isEmpty }
    public var keys: [String] { members.map(\.key) }

    private func position(of key: String) -> Int? {
        if let positions { return positions[key] }
        return members.firstIndex { $0.key == key }
    }

    /// Rebuilds the index from `members` when it is large enough to need one.
    private mutating func reindex() {
        guard members.count > Self.indexThreshold else { positions = nil; return }
        var index: [String: Int] = [:]
        index.reserveCapacity(members.count)
        for (i, m) in members.enumerated() { index[m.key] = i }
        positions = index
    }

    /// Reads or writes a member. Writing nil removes it; writing a new key appends it.
    public subscript(key: String) -> JSONValue? {
        get { position(of: key).map { members[$0].value } }
        set {
            if let i = position(of: key) {
                if let newValue {
                    members[i].value = newValue
                } else {
                    members.remove(at: i)
                    reindex()
                }
            } else if let newValue {
                members.append((key, newValue))
                if positions != nil {
                    positions![key] = members.count - 1
                } else if members.count > Self.indexThreshold {
                    reindex()
                }
            }
        }
    }

    /// Puts `key` first, replacing any earlier value.
    public mutating func prepend(_ key: String, _ value: JSONValue) {
        members.removeAll { $0.key == key }
        members.insert((key, value), at: 0)
        reindex()
    }

    /// The members whose key passes `isIncluded`, in order (keys are already unique,
    /// so nothing is looked up).
    public func filter(keys isIncluded: (String) -> Bool) -> JSONObject {
        var kept = JSONObject()
        kept.members = members.filter { isIncluded($0.key) }
        kept.reindex()
        return kept
    }

    public func makeIterator() -> IndexingIterator<[(key: String, value: JSONValue)]> {
        members.makeIterator()
    }

    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        lhs.members.count == rhs.members.count
            && zip(lhs.members, rhs.members).allSatisfy { $0.key == $1.key && $0.value == $1.value }
    }
}
