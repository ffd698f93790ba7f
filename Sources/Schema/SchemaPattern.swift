import CPCRE2

/// A `pattern` (or `patternProperties` key) compiled once with PCRE2.
///
/// ECMA-262 is approximated: UTF-8 patterns, unanchored search, `$` only at the
/// very end, `\uXXXX` and `\u{X}` escapes; `\d` and `\w` are ASCII as in ECMA-262
/// (and so is `\s`, which in ECMA-262 also matches Unicode spaces).
/// Matching runs under match and depth limits so a catastrophic pattern
/// cannot pin a thread: a subject that hits them does not match.
final class SchemaPattern: @unchecked Sendable {
    let source: String
    private let code: OpaquePointer
    private let context: OpaquePointer

    static let maxPatternBytes = 4_096
    static let matchLimit: UInt32 = 1_000_000
    static let depthLimit: UInt32 = 10_000
    static let heapLimitKiB: UInt32 = 4_096

    /// Nil with PCRE2's message when the pattern does not compile.
    static func compile(_ source: String) -> Result<SchemaPattern, PatternError> {
        guard source.utf8.count <= maxPatternBytes else {
            return .failure(PatternError(message: "is longer than \(maxPatternBytes) bytes"))
        }
        var errorCode: Int32 = 0
        var errorOffset = 0
        let compileContext = pcre2_compile_context_create_8(nil)
        defer { pcre2_compile_context_free_8(compileContext) }
        pcre2_set_parens_nest_limit_8(compileContext, 64)
        pcre2_set_compile_extra_options_8(compileContext, UInt32(PCRE2_EXTRA_ALT_BSUX))
        let options = UInt32(PCRE2_UTF) | UInt32(PCRE2_ALT_BSUX) | UInt32(PCRE2_DOLLAR_ENDONLY)
        var bytes = Array(translatingPropertyNames(source).utf8)
        let length = bytes.count
        if bytes.isEmpty { bytes = [0] }
        let compiled = bytes.withUnsafeBufferPointer { buffer in
            pcre2_compile_8(buffer.baseAddress, length, options, &errorCode, &errorOffset, compileContext)
        }
        guard let compiled else {
            var message = [UInt8](repeating: 0, count: 256)
            let length = pcre2_get_error_message_8(errorCode, &message, message.count)
            let text = length > 0 ? String(decoding: message[..<Int(length)], as: UTF8.self) : "error \(errorCode)"
            return .failure(PatternError(message: "does not compile: \(text) at offset \(errorOffset)"))
        }
        return .success(SchemaPattern(source: source, code: compiled))
    }

    struct PatternError: Error { let message: String }

    /// ECMA-262's long general-category names (`\p{Letter}`), which PCRE2 10.42
    /// does not know, as PCRE2's short ones (`\p{L}`).
    static let categoryNames: [String: String] = [
        "Letter": "L", "Lowercase_Letter": "Ll", "Uppercase_Letter": "Lu", "Titlecase_Letter": "Lt",
        "Modifier_Letter": "Lm", "Other_Letter": "Lo", "Mark": "M", "Number": "N", "Decimal_Number": "Nd",
        "digit": "Nd", "Letter_Number": "Nl", "Other_Number": "No", "Punctuation": "P", "Symbol": "S",
        "Separator": "Z", "Space_Separator": "Zs", "Other": "C", "Control": "Cc",
    ]

    static func translatingPropertyNames(_ source: String) -> String {
        guard source.contains("{") else { return source }
        var out = ""
        var backslashes = 0
        var rest = Substring(source)
        while let c = rest.first {
            if (c == "p" || c == "P"), backslashes % 2 == 1, rest.dropFirst().first == "{",
               let close = rest.firstIndex(of: "}") {
                let name = String(rest[rest.index(rest.startIndex, offsetBy: 2)..<close])
                if let short = categoryNames[name] {
                    out += "\(c){\(short)}"
                    rest = rest[rest.index(after: close)...]
                    backslashes = 0
                    continue
                }
            }
            backslashes = c == "\\" ? backslashes + 1 : 0
            out.append(c)
            rest = rest.dropFirst()
        }
        return out
    }

    private init(source: String, code: OpaquePointer) {
        self.source = source
        self.code = code
        context = pcre2_match_context_create_8(nil)
        pcre2_set_match_limit_8(context, Self.matchLimit)
        pcre2_set_depth_limit_8(context, Self.depthLimit)
        pcre2_set_heap_limit_8(context, Self.heapLimitKiB)
    }

    deinit {
        pcre2_match_context_free_8(context)
        pcre2_code_free_8(code)
    }

    /// Whether the pattern matches somewhere in `subject`.
    /// Thread-safe: the compiled code and match context are only read; match data is per call.
    func matches(_ subject: String) -> Bool {
        guard let matchData = pcre2_match_data_create_8(1, nil) else { return false }
        defer { pcre2_match_data_free_8(matchData) }
        var subject = subject
        let rc = subject.withUTF8 { bytes -> Int32 in
            let base = bytes.baseAddress ?? Self.empty
            return pcre2_match_8(code, base, bytes.count, 0, 0, matchData, context)
        }
        return rc >= 0
    }

    nonisolated(unsafe) private static let empty: UnsafePointer<UInt8> = {
        let p = UnsafeMutablePointer<UInt8>.allocate(capacity: 1)
        p.initialize(to: 0)
        return UnsafePointer(p)
    }()
}
