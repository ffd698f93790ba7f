import CPCRE2
import CSQLite

/// Registers `regexp(pattern, value, flags)` so compiled filters can express
/// MongoDB's `$regex` inside SQL, with PCRE2 (the engine MongoDB uses).
///
/// Compiled patterns are cached per statement through SQLite's auxiliary
/// data. Matching runs under PCRE2's match and depth limits, so a
/// catastrophic pattern fails the query with an error instead of pinning a
/// worker thread.
enum RegexFunction {
    static let matchLimit: UInt32 = 1_000_000
    static let depthLimit: UInt32 = 10_000
    static let limitMessage = "regular expression needs too much backtracking"

    /// A compiled pattern and its match data, freed with the statement.
    final class Compiled {
        let code: OpaquePointer
        let matchData: OpaquePointer
        let context: OpaquePointer

        init?(pattern: String, flags: String) {
            var errorCode: Int32 = 0
            var errorOffset = 0
            let bytes = Array(pattern.utf8)
            guard let code = pcre2_compile_8(bytes, bytes.count, RegexFunction.options(flags), &errorCode, &errorOffset, nil) else {
                return nil
            }
            self.code = code
            matchData = pcre2_match_data_create_from_pattern_8(code, nil)
            context = pcre2_match_context_create_8(nil)
            pcre2_set_match_limit_8(context, RegexFunction.matchLimit)
            pcre2_set_depth_limit_8(context, RegexFunction.depthLimit)
        }

        deinit {
            pcre2_match_context_free_8(context)
            pcre2_match_data_free_8(matchData)
            pcre2_code_free_8(code)
        }

        /// 1 for a match, 0 for none, nil when a limit was hit.
        func matches(_ subject: UnsafePointer<UInt8>, _ length: Int) -> Int32? {
            let rc = pcre2_match_8(code, subject, length, 0, 0, matchData, context)
            if rc >= 0 { return 1 }
            if rc == PCRE2_ERROR_NOMATCH { return 0 }
            return nil
        }
    }

    static func register(on db: OpaquePointer) {
        sqlite3_create_function_v2(db, "regexp", 3, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nil, { ctx, argc, argv in
            guard let ctx, let argv, argc == 3 else { return }
            guard sqlite3_value_type(argv[1]) == SQLITE_TEXT else { sqlite3_result_int(ctx, 0); return }
            let compiled: Compiled
            if let aux = sqlite3_get_auxdata(ctx, 0) {
                compiled = Unmanaged<Compiled>.fromOpaque(aux).takeUnretainedValue()
            } else {
                let pattern = String(cString: sqlite3_value_text(argv[0]))
                let flags = sqlite3_value_text(argv[2]).map { String(cString: $0) } ?? ""
                guard let made = Compiled(pattern: pattern, flags: flags) else {
                    sqlite3_result_error(ctx, "invalid regular expression", -1)
                    return
                }
                compiled = made
                sqlite3_set_auxdata(ctx, 0, Unmanaged.passRetained(made).toOpaque()) { p in
                    if let p { Unmanaged<Compiled>.fromOpaque(p).release() }
                }
            }
            guard let text = sqlite3_value_text(argv[1]) else { sqlite3_result_int(ctx, 0); return }
            let length = Int(sqlite3_value_bytes(argv[1]))
            guard let result = compiled.matches(text, length) else {
                sqlite3_result_error(ctx, RegexFunction.limitMessage, -1)
                return
            }
            sqlite3_result_int(ctx, result)
        }, nil, nil, nil)
    }

    /// MongoDB's `$options` letters as PCRE2 options; patterns are UTF-8.
    static func options(_ flags: String) -> UInt32 {
        var o = UInt32(PCRE2_UTF) | UInt32(PCRE2_UCP)
        if flags.contains("i") { o |= UInt32(PCRE2_CASELESS) }
        if flags.contains("m") { o |= UInt32(PCRE2_MULTILINE) }
        if flags.contains("s") { o |= UInt32(PCRE2_DOTALL) }
        if flags.contains("x") { o |= UInt32(PCRE2_EXTENDED) }
        return o
    }

    /// Validates a pattern before it reaches SQL, so a bad one is a 400.
    public static func isValid(_ pattern: String, flags: String) -> Bool {
        Compiled(pattern: pattern, flags: flags) != nil
    }
}
