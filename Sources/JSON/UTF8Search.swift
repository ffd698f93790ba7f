#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Byte searches in UTF-8 text (`memchr` then `memcmp`), for the hot paths where
/// Foundation's `String.contains`/`replacingOccurrences` (Unicode-aware,
/// through NSString) cost more than the work around them. Both texts are
/// compared as bytes, which is exact for JSON and SQL text.
public enum UTF8Search {
    /// The byte offset of the first `needle` in `text`, or nil.
    public static func firstOffset(of needle: String, in text: String) -> Int? {
        var text = text, needle = needle
        return text.withUTF8 { hay in
            needle.withUTF8 { pin in
                guard let base = hay.baseAddress else { return nil }
                return find(pin, in: base, from: 0, count: hay.count)
            }
        }
    }

    /// `text` with every `needle` replaced by `replacement`, left to right, not overlapping.
    public static func replacing(_ needle: String, with replacement: String, in text: String) -> String {
        var text = text, needle = needle
        return text.withUTF8 { hay -> String in
            needle.withUTF8 { pin -> String in
                guard pin.count > 0, let base = hay.baseAddress else { return String(decoding: hay, as: UTF8.self) }
                var out: [UInt8] = []
                out.reserveCapacity(hay.count)
                var at = 0
                while at < hay.count, let offset = find(pin, in: base, from: at, count: hay.count) {
                    out.append(contentsOf: hay[at..<offset])
                    out.append(contentsOf: replacement.utf8)
                    at = offset + pin.count
                }
                if at < hay.count { out.append(contentsOf: hay[at...]) }
                return String(decoding: out, as: UTF8.self)
            }
        }
    }

    /// The offset of the first `pin` in `base[from..<count]`, or nil.
    private static func find(_ pin: UnsafeBufferPointer<UInt8>, in base: UnsafePointer<UInt8>, from: Int, count: Int) -> Int? {
        guard let first = pin.first, let pinBase = pin.baseAddress else { return nil }
        var at = from
        while count - at >= pin.count {
            guard let hit = memchr(base + at, Int32(first), count - at - pin.count + 1) else { return nil }
            let offset = UnsafeRawPointer(hit) - UnsafeRawPointer(base)
            if memcmp(base + offset, pinBase, pin.count) == 0 { return offset }
            at = offset + 1
        }
        return nil
    }
}
