import JSON

/// JSON Schema's equality of values: numbers by value (1 == 1.0), objects
/// whatever the order of their members, arrays item by item.
/// `Hashable` with the same meaning, for `uniqueItems` and large `enum`s.
struct JSONEquivalence: Hashable, @unchecked Sendable {
    let value: JSONValue

    init(_ value: JSONValue) { self.value = value }

    static func == (lhs: JSONEquivalence, rhs: JSONEquivalence) -> Bool {
        equal(lhs.value, rhs.value)
    }

    func hash(into hasher: inout Hasher) {
        Self.hash(value, into: &hasher)
    }

    static func equal(_ a: JSONValue, _ b: JSONValue) -> Bool {
        switch (a, b) {
        case (.null, .null): return true
        case (.bool(let x), .bool(let y)): return x == y
        case (.int(let x), .int(let y)): return x == y
        case (.int, .double), (.double, .int), (.double, .double):
            return SchemaNumber.compare(a, b) == 0
        case (.string(let x), .string(let y)): return x.utf8.elementsEqual(y.utf8) // code points, not canonical equivalence
        case (.array(let x), .array(let y)):
            return x.count == y.count && zip(x, y).allSatisfy { equal($0, $1) }
        case (.object(let x), .object(let y)):
            guard x.count == y.count else { return false }
            for (key, value) in x {
                guard let other = y[key], equal(value, other) else { return false }
            }
            return true
        default: return false
        }
    }

    private static func hash(_ value: JSONValue, into hasher: inout Hasher) {
        switch value {
        case .null: hasher.combine(0)
        case .bool(let b): hasher.combine(1); hasher.combine(b)
        case .int(let i): hasher.combine(2); hasher.combine(Double(i))
        case .double(let d): hasher.combine(2); hasher.combine(d == 0 ? 0 : d)
        case .string(let s): hasher.combine(3); for b in s.utf8 { hasher.combine(b) }
        case .array(let items):
            hasher.combine(4); hasher.combine(items.count)
            for item in items { hash(item, into: &hasher) }
        case .object(let object):
            // Order-independent: a sum of each member's own hash.
            var sum = 0
            for (key, member) in object {
                var h = Hasher()
                h.combine(key)
                hash(member, into: &h)
                sum &+= h.finalize()
            }
            hasher.combine(5); hasher.combine(object.count); hasher.combine(sum)
        }
    }
}

/// Numbers as JSON Schema sees them: an integer is any number with no fraction.
enum SchemaNumber {
    /// -1, 0 or 1 comparing two numbers exactly (Int64 with Int64 without
    /// going through Double); nil when either is not a number.
    static func compare(_ a: JSONValue, _ b: JSONValue) -> Int? {
        switch (a, b) {
        case (.int(let x), .int(let y)): return x < y ? -1 : (x == y ? 0 : 1)
        case (.int(let x), .double(let y)): return compare(x, y)
        case (.double(let x), .int(let y)): return -compare(y, x)
        case (.double(let x), .double(let y)): return x < y ? -1 : (x == y ? 0 : 1)
        default: return nil
        }
    }

    /// An Int64 against a Double, exactly.
    static func compare(_ x: Int64, _ y: Double) -> Int {
        if y.isNaN { return 1 }
        if y >= 9_223_372_036_854_775_808.0 { return -1 }
        if y < -9_223_372_036_854_775_808.0 { return 1 }
        let whole = y.rounded(.down)
        let w = Int64(whole)
        if x < w { return -1 }
        if x > w { return 1 }
        return whole == y ? 0 : -1
    }

    static func isInteger(_ value: JSONValue) -> Bool {
        switch value {
        case .int: return true
        case .double(let d): return d.isFinite && d.rounded(.towardZero) == d
        default: return false
        }
    }

    /// Whether `value` is a multiple of `divisor` (> 0): exact for integers,
    /// within a few units in the last place for fractions (0.0075 of 0.0001).
    static func isMultiple(_ value: JSONValue, of divisor: JSONValue) -> Bool {
        if case .int(let v) = value, case .int(let d) = divisor { return v % d == 0 }
        guard let v = value.doubleValue, let d = divisor.doubleValue else { return true }
        let quotient = v / d
        guard quotient.isFinite else { return false }
        let nearest = quotient.rounded()
        return abs(quotient - nearest) <= max(1, abs(nearest)).ulp * 8
    }

    /// A number written as JSON, for messages.
    static func text(_ value: JSONValue) -> String {
        switch value {
        case .int(let i): return String(i)
        case .double(let d):
            if d.isFinite, d.rounded(.towardZero) == d, abs(d) < 1e15 { return String(Int64(d)) }
            return String(d)
        default: return ""
        }
    }
}
