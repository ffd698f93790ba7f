/// Image dimensions read straight from the first bytes, before libvips sees
/// the data, so that a header claiming a huge canvas is refused even when
/// the rest of the file is missing (a decompression bomb).
enum ImageHeader {
    static func dimensions(_ b: [UInt8], _ type: MediaType) -> (width: Int, height: Int)? {
        func be32(_ i: Int) -> Int { Int(b[i]) << 24 | Int(b[i + 1]) << 16 | Int(b[i + 2]) << 8 | Int(b[i + 3]) }
        func be16(_ i: Int) -> Int { Int(b[i]) << 8 | Int(b[i + 1]) }
        func le16(_ i: Int) -> Int { Int(b[i]) | Int(b[i + 1]) << 8 }
        switch type {
        case .png:
            guard b.count >= 24, Array(b[12..<16]) == Array("IHDR".utf8) else { return nil }
            return (be32(16), be32(20))
        case .gif:
            guard b.count >= 10 else { return nil }
            return (le16(6), le16(8))
        case .jpeg:
            var i = 2
            while i + 9 < b.count {
                guard b[i] == 0xFF else { return nil }
                let marker = b[i + 1]
                if marker == 0xFF { i += 1; continue }
                if marker == 0xD8 || (0xD0...0xD7).contains(marker) || marker == 0x01 { i += 2; continue }
                // SOF0–SOF15 except DHT (C4), JPG (C8) and DAC (CC).
                if (0xC0...0xCF).contains(marker) && ![0xC4, 0xC8, 0xCC].contains(marker) {
                    return (be16(i + 7), be16(i + 5))
                }
                i += 2 + be16(i + 2)
            }
            return nil
        default:
            return nil
        }
    }
}
