import CSQLite
import Store

/// `regexp(pattern, value, flags)` on SQLite connections, so compiled filters
/// can express `$regex` inside SQL. Compiled patterns are cached per
/// statement through SQLite's auxiliary data.
extension RegexFunction {
    /// The bytes of a text argument, NULs included.
    static func bytes(_ value: OpaquePointer?) -> UnsafeBufferPointer<UInt8> {
        let start = sqlite3_value_text(value)
        return UnsafeBufferPointer(start: start, count: start == nil ? 0 : Int(sqlite3_value_bytes(value)))
    }

    static func register(on db: OpaquePointer) {
        sqlite3_create_function_v2(db, "regexp", 3, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nil, { ctx, argc, argv in
            guard let ctx, let argv, argc == 3 else { return }
            guard sqlite3_value_type(argv[1]) == SQLITE_TEXT else { sqlite3_result_int(ctx, 0); return }
            let compiled: Compiled
            if let aux = sqlite3_get_auxdata(ctx, 0) {
                compiled = Unmanaged<Compiled>.fromOpaque(aux).takeUnretainedValue()
            } else {
                let flags = String(decoding: RegexFunction.bytes(argv[2]), as: UTF8.self)
                guard let made = try? Compiled(pattern: RegexFunction.bytes(argv[0]), flags: flags) else {
                    sqlite3_result_error(ctx, "invalid regular expression", -1)
                    return
                }
                compiled = made
                sqlite3_set_auxdata(ctx, 0, Unmanaged.passRetained(made).toOpaque()) { p in
                    if let p { Unmanaged<Compiled>.fromOpaque(p).release() }
                }
            }
            let subject = RegexFunction.bytes(argv[1])
            guard let result = compiled.matches(subject.baseAddress ?? RegexFunction.empty, subject.count) else {
                sqlite3_result_error(ctx, RegexFunction.limitMessage, -1)
                return
            }
            sqlite3_result_int(ctx, result)
        }, nil, nil, nil)
    }
}
