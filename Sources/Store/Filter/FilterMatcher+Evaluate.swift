import JSON

/// Evaluating the tree on a parsed document.
extension FilterMatcher.Node {
    /// Whether the node holds with `root` as the document (or the `$elemMatch` element).
    func holds(on root: JSONValue?, _ meter: FilterMatcher.Meter) throws(FilterMatcher.Abort) -> Bool {
        try meter.charge(1)
        switch self {
        case .constant(let b): return b
        case .and(let parts):
            for part in parts where !(try part.holds(on: root, meter)) { return false }
            return true
        case .or(let parts):
            for part in parts where try part.holds(on: root, meter) { return true }
            return false
        case .not(let inner): return !(try inner.holds(on: root, meter))
        case .field(let path, let expand, let test):
            guard let first = path.first else { return try test.leaf(root, expand: expand, meter) }
            return try test.walk(FilterMatcher.key(first, of: root), path.steps[...], expand: expand, meter)
        case .geo(let path, let test):
            var value = root
            for key in path { value = FilterMatcher.key(key, of: value) }
            return test.holds(FilterMatcher.point(value))
        }
    }
}

extension FilterMatcher {
    /// Elements or keys of a container (what comparing its JSON text costs, in steps); 0 for a scalar.
    static func width(_ value: JSONValue?) -> Int {
        switch value {
        case .array(let a)?: return a.count
        case .object(let o)?: return o.count
        default: return 0
        }
    }

    /// A key of a document; nothing for any other value (a JSON path `$."k"`).
    static func key(_ key: String, of value: JSONValue?) -> JSONValue? {
        if case .object(let o)? = value { return o[key] }
        return nil
    }
}

extension FilterMatcher.Test {
    /// Every value one step further, as `SQLDialect.walk` yields its rows:
    /// in an array, the key of each element that is a document and, for a
    /// numeric key, the element at that position (not expanded when it is
    /// the last step); elsewhere the key (missing unless a document has it).
    func walk(_ value: JSONValue?, _ steps: ArraySlice<PathWalkStep>, expand: Bool,
              _ meter: FilterMatcher.Meter) throws(FilterMatcher.Abort) -> Bool {
        guard let step = steps.first else { return try leaf(value, expand: expand, meter) }
        let rest = steps.dropFirst()
        guard case .array(let elements)? = value else {
            return try walk(FilterMatcher.key(step.key, of: value), rest, expand: expand, meter)
        }
        try meter.charge(elements.count)
        for case .object(let o) in elements where try walk(o[step.key], rest, expand: expand, meter) { return true }
        if let i = step.index, i < elements.count {
            return try walk(elements[i], rest, expand: rest.isEmpty ? false : expand, meter)
        }
        return false
    }

    /// The test on the value itself or, with `expand`, on any element of it.
    func leaf(_ value: JSONValue?, expand: Bool, _ meter: FilterMatcher.Meter) throws(FilterMatcher.Abort) -> Bool {
        if try holds(value, meter) { return true }
        guard expand, case .array(let elements)? = value else { return false }
        for element in elements where try holds(element, meter) { return true }
        return false
    }

    /// The test on one value; `meter` is charged a step per test, and more
    /// for work that grows with the value (a container's JSON text, a regex subject).
    func holds(_ value: JSONValue?, _ meter: FilterMatcher.Meter) throws(FilterMatcher.Abort) -> Bool {
        try meter.charge(1)
        switch self {
        case .equals(let literal):
            if case .container = literal { try meter.charge(FilterMatcher.width(value)) }
            return FilterMatcher.equals(value, literal)
        case .equalsAny(let literals):
            if literals.hasContainers { try meter.charge(FilterMatcher.width(value)) }
            return literals.contains(value)
        case .compare(let order, let bound):
            switch (value, bound) {
            case (_, .never): return false
            case (_, .null): return FilterMatcher.equals(value, .null)
            case (.int(let i)?, .number(let b)): return order.holds(SQLNumber.int(i).compare(b))
            case (.double(let d)?, .number(let b)): return order.holds(SQLNumber.double(d).compare(b))
            case (.string(let s)?, .string(let b)): return order.holds(FilterMatcher.compareBytes(s, b))
            case (.bool(let v)?, .bool(let b)): return order.holds((v ? 1 : 0) - b)
            default: return false
            }
        case .regex(let regex):
            guard case .string(let s)? = value else { return false }
            try meter.charge(s.utf8.count / 64)
            return try regex.matches(s)
        case .mod(let divisor, let remainder):
            let n: Int64
            switch value {
            case .int(let i)?: n = i
            case .double(let d)?: n = SQLNumber.castToInteger(d)
            default: return false
            }
            // SQLite's `%` takes -1 as 1 (INT64_MIN % -1 would trap).
            return n % (divisor == -1 ? 1 : divisor) == remainder
        case .type(let classes): return classes.contains { $0.matches(value) }
        case .exists: return value != nil
        case .size(let n):
            guard case .array(let a)? = value else { return false }
            return Int64(a.count) == n
        case .elemMatch(let node, let operatorForm):
            guard case .array(let elements)? = value else { return false }
            for element in elements {
                if !operatorForm, element.objectValue == nil { continue }
                if try node.holds(on: element, meter) { return true }
            }
            return false
        }
    }
}

extension Filter.TypeClass {
    func matches(_ value: JSONValue?) -> Bool {
        switch (self, value) {
        case (.number, .int?), (.number, .double?), (.string, .string?), (.object, .object?), (.array, .array?),
             (.bool, .bool?), (.null, .null?): return true
        default: return false
        }
    }
}

extension FilterMatcher {
    /// Equality as the compiler's `equals` writes it in SQL.
    static func equals(_ value: JSONValue?, _ literal: Literal) -> Bool {
        switch (value, literal) {
        case (nil, .null), (.null?, .null): return true
        case (.bool(let a)?, .bool(let b)): return a == b
        case (.int(let i)?, .number(let b)): return SQLNumber.int(i).compare(b) == 0
        case (.double(let d)?, .number(let b)): return SQLNumber.double(d).compare(b) == 0
        case (.string(let a)?, .string(let b)): return a.utf8.elementsEqual(b.utf8)
        case (.array?, .container(true, let text)), (.object?, .container(false, let text)): return value!.jsonText == text
        default: return false
        }
    }

    /// SQLite's BINARY collation: UTF-8 bytes, not Unicode canonical order.
    static func compareBytes(_ a: String, _ b: String) -> Int {
        var i = a.utf8.makeIterator(), j = b.utf8.makeIterator()
        while true {
            switch (i.next(), j.next()) {
            case (nil, nil): return 0
            case (nil, _): return -1
            case (_, nil): return 1
            case (let x?, let y?) where x != y: return x < y ? -1 : 1
            default: continue
            }
        }
    }
}

/// A SQL number: SQLite keeps integers and reals apart and compares them exactly.
enum SQLNumber {
    case int(Int64)
    case double(Double)

    var double: Double {
        switch self {
        case .int(let i): return Double(i)
        case .double(let d): return d
        }
    }

    /// -1, 0 or 1, as SQLite orders an integer against a real (exactly, not through a double).
    func compare(_ other: SQLNumber) -> Int {
        switch (self, other) {
        case (.int(let a), .int(let b)): return a < b ? -1 : (a > b ? 1 : 0)
        case (.double(let a), .double(let b)): return a < b ? -1 : (a > b ? 1 : 0)
        case (.int(let a), .double(let b)): return Self.compare(a, b)
        case (.double(let a), .int(let b)): return -Self.compare(b, a)
        }
    }

    static func compare(_ i: Int64, _ d: Double) -> Int {
        if d.isNaN { return 1 }
        if d >= 9_223_372_036_854_775_808.0 { return -1 }
        if d < -9_223_372_036_854_775_808.0 { return 1 }
        let whole = Int64(d.rounded(.towardZero))
        if i != whole { return i < whole ? -1 : 1 }
        let fraction = d - Double(whole)
        return fraction > 0 ? -1 : (fraction < 0 ? 1 : 0)
    }

    /// `CAST(real AS INTEGER)`: truncated, saturating at the 64-bit limits.
    static func castToInteger(_ d: Double) -> Int64 {
        if d.isNaN { return 0 }
        if d <= -9_223_372_036_854_775_808.0 { return .min }
        if d >= 9_223_372_036_854_775_807.0 { return .max }
        return Int64(d.rounded(.towardZero))
    }
}
