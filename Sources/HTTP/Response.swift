/// A response ready to send: status, headers and body bytes.
public struct Response: Sendable {
    public var status: Int
    public var headers: Headers
    public var body: [UInt8]
    /// A file range sent after `body` (with `sendfile`), for stored files.
    public var file: FileBody?

    public init(status: Int, headers: Headers = Headers(), body: [UInt8] = [], file: FileBody? = nil) {
        self.status = status
        self.headers = headers
        self.body = body
        self.file = file
    }

    /// A JSON response from already-serialised JSON text.
    public static func json(_ status: Int, _ text: String) -> Response {
        Response(status: status, headers: Headers([("Content-Type", "application/json; charset=utf-8")]), body: Array(text.utf8))
    }

    public static func html(_ status: Int, _ text: String) -> Response {
        Response(status: status, headers: Headers([("Content-Type", "text/html; charset=utf-8")]), body: Array(text.utf8))
    }

    /// The reason phrase for `status`.
    public static func reason(_ status: Int) -> String {
        switch status {
        case 200: return "OK"
        case 201: return "Created"
        case 204: return "No Content"
        case 206: return "Partial Content"
        case 304: return "Not Modified"
        case 400: return "Bad Request"
        case 401: return "Unauthorized"
        case 403: return "Forbidden"
        case 404: return "Not Found"
        case 405: return "Method Not Allowed"
        case 409: return "Conflict"
        case 410: return "Gone"
        case 412: return "Precondition Failed"
        case 413: return "Payload Too Large"
        case 415: return "Unsupported Media Type"
        case 416: return "Range Not Satisfiable"
        case 422: return "Unprocessable Content"
        case 429: return "Too Many Requests"
        case 431: return "Request Header Fields Too Large"
        case 500: return "Internal Server Error"
        case 503: return "Service Unavailable"
        default: return "Status \(status)"
        }
    }
}
