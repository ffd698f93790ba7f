import CCrypto

/// SHA-256 through OpenSSL's libcrypto, as lower-case hex.
public enum SHA256 {
    public static func hex(_ bytes: [UInt8]) -> String { bytes.withUnsafeBytes { hex($0) } }

    public static func hex(_ input: UnsafeRawBufferPointer) -> String {
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        let ok = EVP_Digest(input.baseAddress, input.count, &digest, &length, EVP_sha256(), nil)
        precondition(ok == 1 && length == 32, "EVP_Digest(SHA-256) failed")
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(64)
        for b in digest { out.append(digits[Int(b >> 4)]); out.append(digits[Int(b & 15)]) }
        return String(decoding: out, as: UTF8.self)
    }
}
