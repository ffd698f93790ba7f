import CPCRE2

/// MongoDB's `$regex` with PCRE2 (the engine MongoDB uses): checked before it
/// reaches SQL, run by the live matcher, and by SQLite's `regexp` function
/// (`RegexFunction+SQLite`, which caches compiled patterns per statement).
/// Patterns are bounded before they compile (`QueryLimits`: length,
/// capture groups, and PCRE2's parenthesis nesting), and every match runs
/// under PCRE2's match, depth and heap limits, so a catastrophic pattern
/// fails the query with `limitMessage` (400 `RegexTooComplex` upstream)
/// instead of pinning a worker thread or taking gigabytes of memory.
/// Patterns and subjects are passed with their byte lengths: a NUL is data.
package enum RegexFunction {
    static let matchLimit: UInt32 = 1_000_000
    static let depthLimit: UInt32 = 10_000
    /// PCRE2 keeps its backtracking frames on the heap; each holds every
    /// capture, so this bounds memory whatever the pattern. In KiB.
    static let heapLimitKiB: UInt32 = 4_096
    static let parensNestLimit: UInt32 = 32
    package static let limitMessage = "regular expression needs too much backtracking"

    /// Why a pattern is refused before it reaches SQL.
    package enum Refusal: Error {
        case tooLong, tooManyGroups, invalid
    }

    /// A compiled pattern and its match data, freed with the statement.
    package final class Compiled {
        let code: OpaquePointer
        let matchData: OpaquePointer
        let context: OpaquePointer

        package init(pattern: UnsafeBufferPointer<UInt8>, flags: String) throws(Refusal) {
            guard pattern.count <= QueryLimits.maxRegexBytes else { throw .tooLong }
            var errorCode: Int32 = 0
            var errorOffset = 0
            let compileContext = pcre2_compile_context_create_8(nil)
            defer { pcre2_compile_context_free_8(compileContext) }
            pcre2_set_parens_nest_limit_8(compileContext, RegexFunction.parensNestLimit)
            guard let code = pcre2_compile_8(pattern.baseAddress ?? RegexFunction.empty, pattern.count, RegexFunction.options(flags),
                                             &errorCode, &errorOffset, compileContext) else {
                throw .invalid
            }
            var captures: UInt32 = 0
            pcre2_pattern_info_8(code, UInt32(PCRE2_INFO_CAPTURECOUNT), &captures)
            guard captures <= QueryLimits.maxRegexGroups else {
                pcre2_code_free_8(code)
                throw .tooManyGroups
            }
            self.code = code
            matchData = pcre2_match_data_create_from_pattern_8(code, nil)
            context = pcre2_match_context_create_8(nil)
            pcre2_set_match_limit_8(context, RegexFunction.matchLimit)
            pcre2_set_depth_limit_8(context, RegexFunction.depthLimit)
            pcre2_set_heap_limit_8(context, RegexFunction.heapLimitKiB)
        }

        deinit {
            pcre2_match_context_free_8(context)
            pcre2_match_data_free_8(matchData)
            pcre2_code_free_8(code)
        }

        /// 1 for a match, 0 for none, nil when a limit was hit.
        package func matches(_ subject: UnsafePointer<UInt8>, _ length: Int) -> Int32? {
            let rc = pcre2_match_8(code, subject, length, 0, 0, matchData, context)
            if rc >= 0 { return 1 }
            if rc == PCRE2_ERROR_NOMATCH { return 0 }
            return nil
        }
    }

    /// A valid pointer for an empty pattern or subject (SQLite gives NULL for "").
    nonisolated(unsafe) package static let empty: UnsafePointer<UInt8> = {
        let p = UnsafeMutablePointer<UInt8>.allocate(capacity: 1)
        p.initialize(to: 0)
        return UnsafePointer(p)
    }()

    /// MongoDB's `$options` letters as PCRE2 options; patterns are UTF-8.
    static func options(_ flags: String) -> UInt32 {
        var o = UInt32(PCRE2_UTF) | UInt32(PCRE2_UCP)
        if flags.contains("i") { o |= UInt32(PCRE2_CASELESS) }
        if flags.contains("m") { o |= UInt32(PCRE2_MULTILINE) }
        if flags.contains("s") { o |= UInt32(PCRE2_DOTALL) }
        if flags.contains("x") { o |= UInt32(PCRE2_EXTENDED) }
        return o
    }

    /// Checks a pattern before it reaches SQL, so a bad one is a 400 that names the limit.
    static func validate(_ pattern: String, flags: String) throws(QueryError) {
        var pattern = pattern
        let refusal: Refusal? = pattern.withUTF8 { bytes in
            do throws(Refusal) {
                _ = try Compiled(pattern: bytes, flags: flags)
                return nil
            } catch {
                return error
            }
        }
        switch refusal {
        case nil: return
        case .tooLong?:
            throw .invalid("A $regex pattern may be at most \(QueryLimits.maxRegexBytes) bytes long.")
        case .tooManyGroups?:
            throw .invalid("A $regex pattern may hold at most \(QueryLimits.maxRegexGroups) capture groups; use (?:…) for grouping.")
        case .invalid?:
            throw .invalid("The regular expression \"\(QueryLimits.excerpt(pattern))\" does not compile (or nests parentheses more than \(parensNestLimit) deep).")
        }
    }
}
