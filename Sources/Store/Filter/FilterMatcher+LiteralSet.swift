import JSON

extension FilterMatcher {
    /// The values of one `$in` or `$nin`, looked up in hash sets instead of
    /// compared one by one, with `equals`' semantics exactly: numbers by
    /// value (an integral real is its integer), strings, arrays and documents
    /// by their UTF-8 bytes (the JSON text for containers), `null` also
    /// matching a missing value. A 10,000-value list costs one lookup per
    /// value tested, not 10,000 comparisons.
    final class LiteralSet {
        private var null = false
        private var bools: Set<Bool> = []
        /// Integers, and reals with no fraction inside the 64-bit range: SQLite
        /// compares an integer and a real exactly (`SQLNumber.compare`), so 2.0 is 2.
        private var integers: Set<Int64> = []
        /// Other reals, by bit pattern (JSON has no NaN; -0.0 is an integer above).
        private var reals: Set<UInt64> = []
        private var strings: Set<ByteKey> = []
        private var arrays: Set<ByteKey> = []
        private var objects: Set<ByteKey> = []

        /// Whether a container is listed (comparing one costs its JSON text).
        let hasContainers: Bool

        init(_ literals: [Literal]) {
            for literal in literals {
                switch literal {
                case .null: null = true
                case .bool(let b): bools.insert(b)
                case .number(.int(let i)): integers.insert(i)
                case .number(.double(let d)):
                    if let i = Self.integer(d) { integers.insert(i) } else { reals.insert(d.bitPattern) }
                case .string(let s): strings.insert(ByteKey(s))
                case .container(true, let text): arrays.insert(ByteKey(text))
                case .container(false, let text): objects.insert(ByteKey(text))
                }
            }
            hasContainers = !arrays.isEmpty || !objects.isEmpty
        }

        /// `literals.contains { FilterMatcher.equals(value, $0) }`, by lookups.
        func contains(_ value: JSONValue?) -> Bool {
            switch value {
            case nil, .null?: return null
            case .bool(let b)?: return bools.contains(b)
            case .int(let i)?: return integers.contains(i)
            case .double(let d)?:
                if let i = Self.integer(d) { return integers.contains(i) }
                return reals.contains(d.bitPattern)
            case .string(let s)?: return strings.contains(ByteKey(s))
            case .array?: return !arrays.isEmpty && arrays.contains(ByteKey(value!.jsonText))
            case .object?: return !objects.isEmpty && objects.contains(ByteKey(value!.jsonText))
            }
        }

        /// The integer a real equals exactly, if any.
        private static func integer(_ d: Double) -> Int64? {
            guard d.rounded(.towardZero) == d, d >= -9_223_372_036_854_775_808.0, d < 9_223_372_036_854_775_808.0 else { return nil }
            return Int64(d)
        }
    }

    /// A string compared and hashed by its UTF-8 bytes (SQLite's BINARY
    /// collation), not by Swift's Unicode canonical equivalence.
    struct ByteKey: Hashable {
        let text: String

        init(_ text: String) { self.text = text }

        static func == (a: ByteKey, b: ByteKey) -> Bool { a.text.utf8.elementsEqual(b.text.utf8) }

        func hash(into hasher: inout Hasher) {
            var copy = text
            copy.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        }
    }

    /// Steps an evaluation may take: a test on a value, a node, an array
    /// element walked, more for containers and regex subjects by size. Past
    /// the allowance the evaluation stops (`evaluate` answers nil).
    final class Meter {
        private(set) var used = 0
        let allowance: Int
        private(set) var exhausted = false

        init(allowance: Int) { self.allowance = allowance }

        func charge(_ steps: Int) throws(Abort) {
            used += steps
            if used > allowance { exhausted = true; throw Abort() }
        }
    }
}
