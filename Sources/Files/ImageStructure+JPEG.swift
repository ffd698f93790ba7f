import Foundation

extension ImageStructure {
    // MARK: JPEG

    /// SOI, marker segments, a frame header, scans with their entropy-coded
    /// data, EOI. Progressive files interleave many scans with tables.
    static func jpeg(_ b: Bytes) throws(Failure) -> (width: Int, height: Int) {
        let n = b.count
        guard n >= 2, b[0] == 0xFF, b[1] == 0xD8 else { throw Failure("JPEG: no SOI marker") }
        var size: (width: Int, height: Int)?
        var sof: UInt8 = 0
        var components: [(id: UInt8, table: UInt8)] = []
        var quantTables: UInt8 = 0  // one bit per DQT destination 0–3
        var scans = 0
        var i = 2
        while true {
            guard i < n else { throw Failure("JPEG: truncated before EOI") }
            // libjpeg only warns about a few extraneous bytes before a marker
            // (some cameras write them); more than that is not a JPEG.
            var junk = 0
            while i < n && b[i] != 0xFF && junk < 16 { i += 1; junk += 1 }
            guard i < n else { throw Failure("JPEG: truncated before EOI") }
            guard b[i] == 0xFF else { throw Failure("JPEG: expected a marker at offset \(i)") }
            while i < n && b[i] == 0xFF { i += 1 }  // fill bytes
            guard i < n else { throw Failure("JPEG: truncated before EOI") }
            let marker = b[i]
            i += 1
            switch marker {
            case 0xD9:
                guard let size else { throw Failure("JPEG: EOI before a frame header") }
                guard scans > 0 else { throw Failure("JPEG: EOI before any scan") }
                return size
            case 0x01:
                continue  // TEM, no length
            case 0x00, 0x02...0xBF, 0xD0...0xD8:
                throw Failure("JPEG: unexpected marker \(hex(marker)) at offset \(i - 1)")
            default:
                break
            }
            guard i + 2 <= n else { throw Failure("JPEG: truncated marker segment") }
            let length = b.be16(i)
            guard length >= 2 else { throw Failure("JPEG: bad length \(length) for marker \(hex(marker))") }
            guard length <= n - i else { throw Failure("JPEG: marker \(hex(marker)) segment runs past the end") }
            let start = i + 2, end = i + length  // the payload, after the length
            switch marker {
            case 0xC0...0xCF where marker != 0xC4 && marker != 0xC8 && marker != 0xCC:
                guard size == nil else { throw Failure("JPEG: a second frame header") }
                guard length >= 8 else { throw Failure("JPEG: frame header too short") }
                let precision = b[start], lossless = marker & 0x03 == 0x03
                guard lossless ? (2...16).contains(precision) : (precision == 8 || precision == 12) else {
                    throw Failure("JPEG: bad sample precision \(precision)")
                }
                let height = b.be16(start + 1), width = b.be16(start + 3), count = Int(b[start + 5])
                guard width > 0, height > 0 else { throw Failure("JPEG: zero dimension \(width)x\(height)") }
                guard (1...4).contains(count) else { throw Failure("JPEG: \(count) components") }
                guard length == 8 + 3 * count else { throw Failure("JPEG: frame header length \(length) for \(count) components") }
                for c in 0..<count {
                    let p = start + 6 + 3 * c, h = b[p + 1] >> 4, v = b[p + 1] & 0x0F, table = b[p + 2]
                    guard (1...4).contains(h), (1...4).contains(v) else { throw Failure("JPEG: bad sampling factors") }
                    guard table <= 3 else { throw Failure("JPEG: bad quantisation table \(table)") }
                    components.append((b[p], table))
                }
                size = (width, height)
                sof = marker
            case 0xC4:  // DHT: class/destination, 16 counts, the symbols; repeated
                var p = start
                while p < end {
                    guard b[p] >> 4 <= 1, b[p] & 0x0F <= 3 else { throw Failure("JPEG: bad Huffman table class or destination") }
                    guard end - p >= 17 else { throw Failure("JPEG: Huffman table runs past its segment") }
                    var symbols = 0
                    for k in 1...16 { symbols += Int(b[p + k]) }
                    guard symbols <= 256, end - p - 17 >= symbols else { throw Failure("JPEG: bad Huffman table length") }
                    p += 17 + symbols
                }
            case 0xDB:  // DQT: precision/destination, 64 entries of 1 or 2 bytes; repeated
                var p = start
                while p < end {
                    let precision = b[p] >> 4, table = b[p] & 0x0F
                    guard precision <= 1, table <= 3 else { throw Failure("JPEG: bad quantisation table header") }
                    guard end - p >= 1 + 64 * Int(precision + 1) else { throw Failure("JPEG: quantisation table runs past its segment") }
                    quantTables |= 1 << table
                    p += 1 + 64 * Int(precision + 1)
                }
            case 0xDD:
                guard length == 4 else { throw Failure("JPEG: bad restart interval length \(length)") }
            case 0xDA:
                guard size != nil else { throw Failure("JPEG: scan before a frame header") }
                guard length >= 3 else { throw Failure("JPEG: scan header too short") }
                let count = Int(b[start])
                guard count >= 1, count <= components.count, length == 6 + 2 * count else {
                    throw Failure("JPEG: scan header length \(length) for \(count) components")
                }
                for c in 0..<count {
                    let p = start + 1 + 2 * c
                    guard let component = components.first(where: { $0.id == b[p] }) else { throw Failure("JPEG: scan names an unknown component") }
                    guard b[p + 1] >> 4 <= 3, b[p + 1] & 0x0F <= 3 else { throw Failure("JPEG: bad entropy table selector") }
                    guard sof & 0x03 == 0x03 || quantTables & (1 << component.table) != 0 else {
                        throw Failure("JPEG: quantisation table \(component.table) not defined")
                    }
                }
                let ss = b[end - 3], se = b[end - 2], ah = b[end - 1] >> 4, al = b[end - 1] & 0x0F
                if sof & 0x07 == 0x02 || sof & 0x07 == 0x06 {  // progressive: SOF2, SOF6, SOF10, SOF14
                    guard ss == 0 ? se == 0 : (ss <= se && se <= 63 && count == 1),
                          ah == 0 || al == ah - 1, al <= 13 else { throw Failure("JPEG: bad progressive scan parameters") }
                }
                scans += 1
                i = try entropyCoded(b, from: end)
                continue
            default:
                break  // APPn, COM, DNL, ...: the length is all there is to check
            }
            i = end
        }
    }

    /// Skips entropy-coded data from `offset`: a 0xFF is stuffing (FF 00), a
    /// restart marker (FF D0–D7), or a marker that ends the scan. Returns the
    /// offset of that marker's 0xFF.
    static func entropyCoded(_ b: Bytes, from offset: Int) throws(Failure) -> Int {
        guard let base = b.baseAddress else { throw Failure("JPEG: truncated scan") }
        let n = b.count
        var p = offset
        while p < n {
            guard let hit = memchr(base + p, 0xFF, n - p) else { break }
            let ff = UnsafeRawPointer(base).distance(to: UnsafeRawPointer(hit))
            var j = ff + 1
            while j < n && b[j] == 0xFF { j += 1 }  // fill bytes before a marker
            guard j < n else { break }
            switch b[j] {
            case 0x00 where j == ff + 1, 0xD0...0xD7:
                p = j + 1
            case 0xC0...0xFE:
                return j - 1
            default:
                throw Failure("JPEG: bad byte \(hex(b[j])) after 0xFF in entropy-coded data at offset \(j)")
            }
        }
        throw Failure("JPEG: truncated scan (no EOI)")
    }
}
