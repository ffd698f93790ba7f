import CCurlShim
import CLuaShim
import Foundation
import JSON

/// roost.http(method, url, {headers = {...}, body = string or table, timeout = ms}):
/// libcurl on the calling thread (a scripts worker: after hooks, functions,
/// jobs; never the writer), only to hosts in `scripts.http_allow`, no
/// redirects, at most the call's remaining budget. Returns
/// `{status = n, body = text, json = parsed body or nil}`; a transport
/// failure raises.
extension LuaState {
    static let httpMethods: Set<String> = ["GET", "POST", "PUT", "DELETE", "HEAD"]
    static let maxResponseBytes = 1 << 20

    func http() throws -> Int32 {
        let method = try string(1, "method").uppercased()
        guard Self.httpMethods.contains(method) else { throw HostFailure("method must be GET, POST, PUT, DELETE or HEAD") }
        let url = try string(2, "url")
        guard let parts = URLComponents(string: url), let scheme = parts.scheme?.lowercased(), scheme == "http" || scheme == "https",
              let host = parts.host?.lowercased(), !host.isEmpty else {
            throw HostFailure("url must be an absolute http:// or https:// URL")
        }
        guard Self.allowed(host, runtime.httpAllow) else { throw HostFailure("\(host) is not in scripts.http_allow") }
        var headers: [String] = []
        var body: [UInt8] = []
        var timeoutMs = 5000
        if lua_type(L, 3) == LUA_TTABLE {
            let options = try object(3, "options")
            if case .object(let h)? = options["headers"] {
                for (name, value) in h {
                    guard let text = value.stringValue, !name.contains(":"), !(name + text).contains("\r"), !(name + text).contains("\n") else {
                        throw HostFailure("headers must be strings without line breaks")
                    }
                    headers.append("\(name): \(text)")
                }
            }
            switch options["body"] {
            case .string(let s)?: body = Array(s.utf8)
            case .object?, .array?:
                body = Array(options["body"]!.jsonText.utf8)
                if !headers.contains(where: { $0.lowercased().hasPrefix("content-type:") }) { headers.append("Content-Type: application/json") }
            case nil, .null?: break
            default: throw HostFailure("body must be a string or a table")
            }
            if case .int(let t)? = options["timeout"] { timeoutMs = Int(max(1, min(t, 60_000))) }
        }
        let remaining = Int(roost_lua_remaining_ns(L) / 1_000_000)
        if remaining > 0 { timeoutMs = min(timeoutMs, remaining) }
        var response = roost_s3_response()
        let status: Int32 = method.withCString { m in
            url.withCString { u in
                let cHeaders = headers.map { strdup($0) }
                defer { cHeaders.forEach { free($0) } }
                return cHeaders.map { UnsafePointer($0) }.withUnsafeBufferPointer { hp in
                    body.withUnsafeBufferPointer { bp in
                        var request = roost_s3_request()
                        request.method = m
                        request.url = u
                        request.headers = hp.baseAddress
                        request.header_count = hp.count
                        request.body = UnsafeRawPointer(bp.baseAddress)
                        request.body_len = bp.count
                        request.out_fd = -1
                        request.timeout_ms = timeoutMs
                        request.connect_timeout_ms = min(timeoutMs, 5000)
                        return roost_s3_perform(&request, &response)
                    }
                }
            }
        }
        defer { roost_s3_release(&response) }
        guard status == 0 else {
            let error = withUnsafeBytes(of: response.error) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            throw HostFailure("\(method) \(host) failed: \(error)")
        }
        guard response.body_len <= Self.maxResponseBytes else { throw HostFailure("the response is larger than 1 MiB") }
        let text = response.body.map { String(decoding: UnsafeRawBufferPointer(start: $0, count: response.body_len), as: UTF8.self) } ?? ""
        lua_createtable(L, 0, 3)
        pushString("status"); lua_pushinteger(L, lua_Integer(response.status)); lua_rawset(L, -3)
        pushString("body"); pushString(text); lua_rawset(L, -3)
        if let json = try? JSONParser.parse(text) {
            pushString("json"); push(json); lua_rawset(L, -3)
        }
        return 1
    }

    static func allowed(_ host: String, _ list: [String]) -> Bool {
        list.contains { entry in
            entry.hasPrefix("*.") ? host.hasSuffix(String(entry.dropFirst(1))) : host == entry
        }
    }
}
