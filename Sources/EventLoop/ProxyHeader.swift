import CEventTLS

/// A PROXY protocol header (v1 text or v2 binary) at the start of a
/// connection's bytes, read as a PROXY listener reads it.
///
/// ```swift
/// ProxyHeader.parse(Array("PROXY TCP4 203.0.113.7 10.0.0.1 51234 443\r\nGET".utf8))
/// // .header(length: 43, client: "203.0.113.7")
/// ```
public enum ProxyHeader: Equatable, Sendable {
    /// A header's beginning; more bytes are needed.
    case incomplete
    /// Not a header, or a malformed one: the connection is closed.
    case invalid
    /// A whole header of `length` bytes naming `client`, or nil when it names
    /// none (v2 LOCAL, v1 UNKNOWN): the connection's own peer stands.
    case header(length: Int, client: String?)

    public static func parse(_ bytes: [UInt8]) -> ProxyHeader {
        var client = [CChar](repeating: 0, count: ROOST_PROXY_CLIENT_MAX)
        let n = bytes.withUnsafeBufferPointer { roost_proxy_parse($0.baseAddress, $0.count, &client, client.count) }
        if n < 0 { return .invalid }
        if n == 0 { return .incomplete }
        return .header(length: Int(n), client: client[0] == 0 ? nil : TLSContext.text(client))
    }
}
