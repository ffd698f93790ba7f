import CSQLite
import Foundation

/// Registers `regexp(pattern, value, flags)` so compiled filters can express
/// MongoDB's `$regex` inside SQL. Compiled patterns are cached per statement
/// through SQLite's auxiliary data, so a list compiles its pattern once.
enum RegexFunction {
    final class Box { let regex: NSRegularExpression; init(_ r: NSRegularExpression) { regex = r } }

    static func register(on db: OpaquePointer) {
        sqlite3_create_function_v2(db, "regexp", 3, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nil, { ctx, argc, argv in
            guard let ctx, let argv, argc == 3 else { return }
            guard sqlite3_value_type(argv[1]) == SQLITE_TEXT else { sqlite3_result_int(ctx, 0); return }
            let regex: NSRegularExpression
            if let aux = sqlite3_get_auxdata(ctx, 0) {
                regex = Unmanaged<Box>.fromOpaque(aux).takeUnretainedValue().regex
            } else {
                let pattern = String(cString: sqlite3_value_text(argv[0]))
                let flags = sqlite3_value_text(argv[2]).map { String(cString: $0) } ?? ""
                guard let compiled = try? NSRegularExpression(pattern: pattern, options: RegexFunction.options(flags)) else {
                    sqlite3_result_error(ctx, "invalid regular expression", -1)
                    return
                }
                regex = compiled
                let box = Unmanaged.passRetained(Box(compiled)).toOpaque()
                sqlite3_set_auxdata(ctx, 0, box) { p in
                    if let p { Unmanaged<Box>.fromOpaque(p).release() }
                }
            }
            let value = String(cString: sqlite3_value_text(argv[1]))
            let range = NSRange(value.startIndex..., in: value)
            sqlite3_result_int(ctx, regex.firstMatch(in: value, options: [], range: range) != nil ? 1 : 0)
        }, nil, nil, nil)
    }

    /// MongoDB's `$options` letters mapped to NSRegularExpression options.
    static func options(_ flags: String) -> NSRegularExpression.Options {
        var o: NSRegularExpression.Options = []
        if flags.contains("i") { o.insert(.caseInsensitive) }
        if flags.contains("m") { o.insert(.anchorsMatchLines) }
        if flags.contains("s") { o.insert(.dotMatchesLineSeparators) }
        if flags.contains("x") { o.insert(.allowCommentsAndWhitespace) }
        return o
    }

    /// Validates a pattern before it reaches SQL, so a bad one is a 400.
    public static func isValid(_ pattern: String, flags: String) -> Bool {
        (try? NSRegularExpression(pattern: pattern, options: RegexFunction.options(flags))) != nil
    }
}
