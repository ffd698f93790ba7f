import CVipsShim

/// libvips through the CVipsShim wrappers, loaded at the first call. Every
/// call is thread-safe; each worker thread uses its own images.
public enum Vips {
    /// The header of an image, read without decoding pixels.
    public struct Header: Sendable, Equatable {
        public let width: Int
        public let height: Int
        /// The libvips loader, e.g. `pngload_buffer`.
        public let loader: String
    }

    /// A libvips failure, with libvips' own message.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        public let description: String
    }

    /// An encoded image.
    public struct Encoded: Sendable {
        public let bytes: [UInt8]
        public let width: Int
        public let height: Int
    }

    /// Output encodings.
    public enum Format: Int32, Sendable {
        case jpeg = 0, webp = 1, png = 2, gif = 3
    }

    /// libvips cannot be loaded (not installed, wrong version): no image can
    /// be checked or thumbnailed in this process. The description names the
    /// library and the loader's reason.
    public struct Unavailable: Error, Sendable, CustomStringConvertible {
        public let description: String
    }

    /// Loads and starts libvips once per process; every call below does it
    /// first. roostd does not link libvips: a daemon that never sees an image
    /// never maps its ~60 libraries nor runs VIPS_INIT (see docs/MEMORY.md).
    /// Each operation gets one thread (Roost parallelises across images) and
    /// the operation cache is off. A failure is final until restart.
    public static func start() throws(Unavailable) {
        if let loadFailure { throw Unavailable(description: loadFailure) }
    }

    /// True once libvips is loaded; never loads it.
    public static var isLoaded: Bool { roost_vips_loaded() != 0 }

    /// The library file `start` opens: `libvips.so.42`, or `ROOST_LIBVIPS`.
    public static var libraryName: String { String(cString: roost_vips_library()) }

    private static let loadFailure: String? = {
        var buffer = [CChar](repeating: 0, count: 512)
        let rc = buffer.withUnsafeMutableBufferPointer { roost_vips_start($0.baseAddress!, $0.count) }
        return rc == 0 ? nil : buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }()

    static func withError<T>(_ body: (UnsafeMutablePointer<CChar>, Int) -> T) throws -> (T, String) {
        try start()
        var buffer = [CChar](repeating: 0, count: 512)
        let result = buffer.withUnsafeMutableBufferPointer { body($0.baseAddress!, $0.count) }
        let message = buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        return (result, message)
    }

    /// Reads the header of the image in `bytes`.
    public static func probe(_ bytes: [UInt8]) throws -> Header {
        var header = roost_vips_header()
        let (rc, message) = try withError { err, n in
            bytes.withUnsafeBytes { roost_vips_probe($0.baseAddress, $0.count, &header, err, n) }
        }
        guard rc == 0 else { throw Failure(description: message) }
        let loader = withUnsafeBytes(of: header.loader) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        return Header(width: Int(header.width), height: Int(header.height), loader: loader)
    }

    /// Decodes every pixel; throws for corrupt or truncated data.
    public static func validate(_ bytes: [UInt8]) throws {
        let (rc, message) = try withError { err, n in
            bytes.withUnsafeBytes { roost_vips_validate($0.baseAddress, $0.count, err, n) }
        }
        guard rc == 0 else { throw Failure(description: message) }
    }

    /// A thumbnail of the image file at `path` that fits `width` x `height`
    /// (fills and crops the centre with `crop`), never enlarged.
    public static func thumbnail(path: String, width: Int, height: Int, crop: Bool, format: Format, quality: Int = 80) throws -> Encoded {
        var out: UnsafeMutableRawPointer?
        var length = 0
        var w: Int32 = 0, h: Int32 = 0
        let (rc, message) = try withError { err, n in
            roost_vips_thumbnail_file(path, Int32(width), Int32(height), crop ? 1 : 0, format.rawValue, Int32(quality),
                                      &out, &length, &w, &h, err, n)
        }
        guard rc == 0, let out else { throw Failure(description: message) }
        defer { roost_vips_free(out) }
        return Encoded(bytes: Array(UnsafeRawBufferPointer(start: out, count: length)), width: Int(w), height: Int(h))
    }

    /// A synthetic `width` x `height` gradient picture, for tests and benchmarks.
    public static func synthesize(width: Int, height: Int, format: Format) throws -> [UInt8] {
        var out: UnsafeMutableRawPointer?
        var length = 0
        let (rc, message) = try withError { err, n in roost_vips_synthesize(Int32(width), Int32(height), format.rawValue, &out, &length, err, n) }
        guard rc == 0, let out else { throw Failure(description: message) }
        defer { roost_vips_free(out) }
        return Array(UnsafeRawBufferPointer(start: out, count: length))
    }

    /// Frees libvips' state for the calling thread.
    public static func threadEnd() { roost_vips_thread_end() }
}
