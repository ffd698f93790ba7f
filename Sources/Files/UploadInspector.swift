import HTTP
import JSON

/// Why an upload is refused, as the client should hear it.
public struct UploadError: Error, Sendable, CustomStringConvertible {
    public let code: ErrorCode
    public let description: String

    init(_ code: ErrorCode, description: String) {
        self.code = code
        self.description = description
    }

    public var status: Int { code.status }

    public static func empty() -> UploadError {
        UploadError(.emptyBody, description: "The request body is empty; send the file's bytes.")
    }
    public static func tooLarge(_ limit: Int) -> UploadError {
        UploadError(.payloadTooLarge, description: "The file is larger than the limit of \(limit) bytes.")
    }
    public static func mismatch(declared: MediaType, actual: MediaType?) -> UploadError {
        UploadError(.unsupportedMediaType,
                    description: "The body was declared \(declared) but its bytes are \(actual.map { "\($0)" } ?? "not a recognised image").")
    }
    public static func corrupt(_ type: MediaType, _ detail: String) -> UploadError {
        UploadError(.invalidImage, description: "The \(type) image is corrupt or truncated: \(detail)")
    }
    /// libvips cannot be loaded, so no image can be accepted (its thumbnails
    /// could never be made); other files still can.
    public static func imagesUnavailable(_ reason: String) -> UploadError {
        UploadError(.imageProcessingUnavailable,
                    description: "Images cannot be processed on this server: \(reason). Files of other types can still be uploaded.")
    }
    public static func tooManyPixels(width: Int, height: Int, limit: Int) -> UploadError {
        UploadError(.imageTooLarge,
                    description: "The image is \(width)×\(height) pixels, more than the limit of \(limit) pixels.")
    }
}

/// An upload that passed inspection: its real type, size, hash and, for
/// images, dimensions.
public struct InspectedUpload: Sendable {
    public let bytes: [UInt8]
    public let contentType: MediaType
    public let sha256: String
    public let width: Int?
    public let height: Int?
    public let filename: String?

    public var isImage: Bool { width != nil }
}

/// Checks an upload's bytes on an upload worker: unwraps multipart, detects
/// the real type from the bytes, refuses mismatches, bombs and corrupt images.
public struct UploadInspector: Sendable {
    /// How deeply an image is checked before the upload is acknowledged.
    public enum Validation: String, Sendable, CaseIterable {
        /// Walk the container (markers, chunks and their CRCs, blocks):
        /// catches truncated and mangled JPEG, PNG and GIF files in
        /// microseconds (PNG's CRCs cover every byte). WebP, whose payload
        /// has no checksum, is decoded too. Pixel data the check cannot see is
        /// decoded by the thumbnail worker, which marks a file whose pixels
        /// cannot be decoded `failed` in its thumbnails.
        case structure
        /// Also decode every pixel with libvips before the 201 (milliseconds
        /// per image: uploads are several times slower).
        case decode
    }

    public let maxBytes: Int
    public let maxPixels: Int
    public let validation: Validation

    public init(maxBytes: Int, maxPixels: Int, validation: Validation = .structure) {
        self.maxBytes = maxBytes
        self.maxPixels = maxPixels
        self.validation = validation
    }

    /// - Parameters:
    ///   - body: the raw request body.
    ///   - contentType: the request's `Content-Type` header.
    public func inspect(body: [UInt8], contentType: String?) throws(UploadError) -> InspectedUpload {
        var bytes = body
        var declaredHeader = contentType
        var filename: String?
        if let contentType, MediaType.declared(contentType) == MediaType("multipart/form-data") {
            guard let boundary = Multipart.boundary(contentType), let part = Multipart.filePart(body, boundary: boundary) else {
                throw UploadError(.invalidMultipart,
                                  description: "The multipart/form-data body is malformed; send one file part.")
            }
            bytes = part.bytes
            declaredHeader = part.contentType
            filename = part.filename.map { String($0.prefix(255)) }
        }
        if bytes.isEmpty { throw .empty() }
        if bytes.count > maxBytes { throw .tooLarge(maxBytes) }
        let declared = MediaType.declared(declaredHeader)
        let sniffed = MediaType.sniff(bytes)
        if let declared, declared.isImageFamily {
            // A declared image must be that image. Types Roost cannot sniff
            // (such as SVG) pass only when the bytes are no known type.
            if let sniffed, sniffed != declared { throw .mismatch(declared: declared, actual: sniffed) }
            if sniffed == nil && MediaType.sniffable.contains(declared) { throw .mismatch(declared: declared, actual: nil) }
        }
        let type = sniffed ?? declared ?? .octetStream
        var width: Int?, height: Int?
        if type.isRasterImage {
            // libvips loads here at the first image, not at start-up.
            do { try Vips.start() } catch { throw .imagesUnavailable("\(error)") }
            if let (w, h) = ImageHeader.dimensions(bytes, type), w * h > maxPixels {
                throw .tooManyPixels(width: w, height: h, limit: maxPixels)
            }
            let size: (width: Int, height: Int)
            do { size = try ImageStructure.check(bytes, type) } catch { throw .corrupt(type, error.description) }
            guard size.width > 0, size.height > 0 else { throw .corrupt(type, "it has no pixels") }
            if size.width * size.height > maxPixels {
                throw .tooManyPixels(width: size.width, height: size.height, limit: maxPixels)
            }
            // WebP carries no checksum over its compressed pixels and libwebp
            // refuses a mangled bitstream, so decoding it finds what the
            // structure cannot. (GIF's decoder paints garbage codes without
            // complaint: a decode would tell nothing more than the blocks do.)
            if validation == .decode || type == .webp {
                let header: Vips.Header
                do { header = try Vips.probe(bytes) } catch { throw .corrupt(type, "\(error)") }
                if header.width * header.height > maxPixels {
                    throw .tooManyPixels(width: header.width, height: header.height, limit: maxPixels)
                }
                do { try Vips.validate(bytes) } catch { throw .corrupt(type, "\(error)") }
            }
            width = size.width
            height = size.height
        }
        return InspectedUpload(bytes: bytes, contentType: type, sha256: SHA256.hex(bytes), width: width, height: height,
                               filename: filename)
    }
}
