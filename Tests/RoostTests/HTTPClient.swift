import RoostTestSupport
import Foundation

/// One HTTP exchange with a running roostd.
struct HTTPResult: Sendable {
    let status: Int
    let headers: [String: String]
    let body: Data

    var text: String { String(decoding: body, as: UTF8.self) }
    var json: Any? { try? JSONSerialization.jsonObject(with: body, options: [.fragmentsAllowed]) }
    var object: [String: Any] { json as? [String: Any] ?? [:] }
    var array: [[String: Any]] { json as? [[String: Any]] ?? [] }

    func header(_ name: String) -> String? {
        headers.first { $0.key.lowercased() == name.lowercased() }?.value
    }
}

/// A deliberately small blocking HTTP/1.1 client on a POSIX socket: one
/// request per connection (`Connection: close`), read to EOF. It sends the
/// bytes exactly as given, so tests control the encoding the way a mobile
/// client would.
enum HTTP {
    static func send(_ method: String, _ url: String, headers: [String: String] = [:], body: Data? = nil) throws -> HTTPResult {
        guard url.hasPrefix("http://") else { throw RoostProcess.Failure("only http:// URLs: \(url)") }
        let rest = url.dropFirst("http://".count)
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        let hostPort = rest[..<slash]
        let target = slash == rest.endIndex ? "/" : String(rest[slash...])
        guard let colon = hostPort.lastIndex(of: ":"), let port = UInt16(hostPort[hostPort.index(after: colon)...]) else {
            throw RoostProcess.Failure("no port in \(url)")
        }
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw RoostProcess.Failure("socket failed") }
        defer { close(fd) }
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw RoostProcess.Failure("connect to \(hostPort) failed") }
        var head = "\(method) \(target) HTTP/1.1\r\nHost: \(hostPort)\r\nConnection: close\r\n"
        for (k, v) in headers { head += "\(k): \(v)\r\n" }
        if let body { head += "Content-Length: \(body.count)\r\n" }
        head += "\r\n"
        var out = Data(head.utf8)
        if let body { out.append(body) }
        try out.withUnsafeBytes { raw in
            var sent = 0
            while sent < raw.count {
                let n = Glibc.send(fd, raw.baseAddress! + sent, raw.count - sent, Int32(MSG_NOSIGNAL))
                if n <= 0 { throw RoostProcess.Failure("send failed") }
                sent += n
            }
        }
        var response = Data()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = recv(fd, &buffer, buffer.count, 0)
            if n <= 0 { break }
            response.append(buffer, count: n)
        }
        return try parse(response)
    }

    static func parse(_ raw: Data) throws -> HTTPResult {
        guard let end = raw.firstRange(of: Data("\r\n\r\n".utf8)) else { throw RoostProcess.Failure("no response head") }
        let head = String(decoding: raw[..<end.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
        let statusParts = head[0].split(separator: " ")
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else { throw RoostProcess.Failure("bad status line \(head[0])") }
        var headers: [String: String] = [:]
        for line in head.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[String(line[..<colon])] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        var body = Data(raw[end.upperBound...])
        if let length = headers.first(where: { $0.key.lowercased() == "content-length" }).flatMap({ Int($0.value) }), body.count > length {
            body = body.prefix(length)
        }
        return HTTPResult(status: status, headers: headers, body: body)
    }

    static func json(_ method: String, _ url: String, _ object: Any, headers: [String: String] = [:]) throws -> HTTPResult {
        var h = ["Content-Type": "application/json"]
        h.merge(headers) { _, new in new }
        return try send(method, url, headers: h, body: try JSONSerialization.data(withJSONObject: object))
    }

    /// Percent-escapes like the seed's CFURLCreateStringByAddingPercentEscapes with
    /// `!*();':@&=+$,/?%#[]{}` as the characters to escape.
    static func iosEscape(_ s: String) -> String {
        var allowed = CharacterSet.urlQueryAllowed
        allowed.remove(charactersIn: "!*();':@&=+$,/?%#[]{}\" ")
        return s.addingPercentEncoding(withAllowedCharacters: allowed)!
    }
}
