/// A minimal `multipart/form-data` reader for uploads with one file part.
public enum Multipart {
    /// The file part of a form: its bytes, declared type and file name.
    public struct Part: Sendable {
        public let bytes: [UInt8]
        public let contentType: String?
        public let filename: String?
    }

    /// The `boundary` parameter of a `multipart/form-data` Content-Type.
    public static func boundary(_ contentType: String) -> String? {
        for parameter in contentType.split(separator: ";").dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1)
            guard pair.count == 2, pair[0].trimmingCharacters(in: " \t").lowercased() == "boundary" else { continue }
            var value = pair[1].trimmingCharacters(in: " \t")
            if value.hasPrefix("\"") && value.hasSuffix("\"") && value.count >= 2 { value = String(value.dropFirst().dropLast()) }
            return (1...70).contains(value.utf8.count) ? value : nil
        }
        return nil
    }

    /// The first part that carries a file name, else the first part named
    /// `file` (openapi.yaml's field). Returns nil when the body is not
    /// well-formed multipart or has no such part: form fields alone are no upload.
    public static func filePart(_ body: [UInt8], boundary: String) -> Part? {
        let delimiter = Array(("--" + boundary).utf8)
        guard var position = find(delimiter, in: body, from: 0) else { return nil }
        var named: Part?
        while true {
            position += delimiter.count
            // "--" after a delimiter ends the body.
            if position + 1 < body.count && body[position] == 45 && body[position + 1] == 45 { break }
            guard let headStart = find([13, 10], in: body, from: position).map({ $0 + 2 }),
                  let headEnd = find([13, 10, 13, 10], in: body, from: headStart - 2) else { return nil }
            let head = headEnd > headStart ? String(decoding: body[headStart..<headEnd], as: UTF8.self) : ""
            let dataStart = headEnd + 4
            guard let next = find([13, 10] + delimiter, in: body, from: dataStart - 2) else { return nil }
            let data = next >= dataStart ? Array(body[dataStart..<next]) : []
            var contentType: String?
            var filename: String?
            var fieldName: String?
            for line in head.split(separator: "\r\n") {
                let pair = line.split(separator: ":", maxSplits: 1)
                guard pair.count == 2 else { continue }
                let name = pair[0].trimmingCharacters(in: " \t").lowercased()
                let value = pair[1].trimmingCharacters(in: " \t")
                if name == "content-type" { contentType = value }
                if name == "content-disposition" {
                    filename = parameter("filename", in: value)
                    fieldName = parameter("name", in: value)
                }
            }
            let part = Part(bytes: data, contentType: contentType, filename: filename)
            if filename != nil { return part }
            if named == nil && fieldName == "file" { named = part }
            position = next + 2
        }
        return named
    }

    static func parameter(_ key: String, in value: String) -> String? {
        for piece in value.split(separator: ";").dropFirst() {
            let pair = piece.split(separator: "=", maxSplits: 1)
            guard pair.count == 2, pair[0].trimmingCharacters(in: " \t").lowercased() == key else { continue }
            var v = pair[1].trimmingCharacters(in: " \t")
            if v.hasPrefix("\"") && v.hasSuffix("\"") && v.count >= 2 { v = String(v.dropFirst().dropLast()) }
            return v
        }
        return nil
    }

    /// The first index of `needle` in `haystack` at or after `from`.
    static func find(_ needle: [UInt8], in haystack: [UInt8], from: Int) -> Int? {
        guard !needle.isEmpty, haystack.count >= needle.count else { return nil }
        var i = max(0, from)
        let last = haystack.count - needle.count
        let first = needle[0]
        while i <= last {
            if haystack[i] == first {
                var j = 1
                while j < needle.count && haystack[i + j] == needle[j] { j += 1 }
                if j == needle.count { return i }
            }
            i += 1
        }
        return nil
    }
}
