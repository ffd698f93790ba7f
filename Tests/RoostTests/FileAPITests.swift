import RoostTestSupport
import Files
import Foundation
import Testing

/// Test pictures made with libvips at run time; nothing binary is committed.
enum TestImages {
    static let started: Bool = (try? Vips.start()) != nil

    static func make(_ width: Int, _ height: Int, _ format: Vips.Format) -> Data {
        precondition(started)
        return Data(try! Vips.synthesize(width: width, height: height, format: format))
    }

    static let png = make(640, 480, .png)
    static let jpeg = make(1200, 800, .jpeg)

    /// A PNG whose compressed pixel data is damaged (the header is intact).
    static var corruptPNG: Data {
        var d = png
        for i in stride(from: d.count / 2, to: d.count / 2 + 64, by: 1) { d[i] ^= 0x5A }
        return d
    }

    /// A PNG header that claims 100000×100000 pixels and has nothing after it.
    static var pixelBomb: Data {
        var d = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13])
        d.append(contentsOf: Array("IHDR".utf8))
        for v in [UInt32(100_000), UInt32(100_000)] { withUnsafeBytes(of: v.bigEndian) { d.append(contentsOf: $0) } }
        d.append(contentsOf: [8, 2, 0, 0, 0, 0, 0, 0, 0])
        return d
    }

    static func header(_ data: Data) throws -> Vips.Header { try Vips.probe([UInt8](data)) }
}

/// The file API against a real roostd: every endpoint and error case.
@Suite(.serialized) struct FileAPITests {
    static let publicFiles = "files_permission: public\nmax_upload_bytes: 2000000\n"

    struct Case: Sendable, CustomStringConvertible {
        let description: String
        let method: String
        let path: String
        var contentType: String? = nil
        var body: Data? = nil
        let status: Int
        let error: String
    }

    static let errorCases: [Case] = [
        Case(description: "empty body", method: "POST", path: "/files", contentType: "image/png", body: Data(), status: 400, error: "EmptyBody"),
        Case(description: "corrupt PNG", method: "POST", path: "/files", contentType: "image/png", body: TestImages.corruptPNG, status: 422, error: "InvalidImage"),
        Case(description: "truncated JPEG", method: "POST", path: "/files", contentType: "image/jpeg",
             body: TestImages.jpeg.prefix(TestImages.jpeg.count / 2), status: 422, error: "InvalidImage"),
        Case(description: "PNG declared, GIF bytes", method: "POST", path: "/files", contentType: "image/png",
             body: Data("GIF89a".utf8) + Data(repeating: 0, count: 64), status: 415, error: "UnsupportedMediaType"),
        Case(description: "JPEG declared, PNG bytes", method: "POST", path: "/files", contentType: "image/jpeg", body: TestImages.png, status: 415, error: "UnsupportedMediaType"),
        Case(description: "oversize", method: "POST", path: "/files", contentType: "application/octet-stream",
             body: Data(repeating: 7, count: 2_100_000), status: 413, error: "PayloadTooLarge"),
        Case(description: "pixel bomb", method: "POST", path: "/files", contentType: "image/png", body: TestImages.pixelBomb, status: 422, error: "ImageTooLarge"),
        Case(description: "malformed multipart", method: "POST", path: "/files", contentType: "multipart/form-data; boundary=xyz",
             body: Data("nothing here".utf8), status: 400, error: "InvalidMultipart"),
        Case(description: "unknown id", method: "GET", path: "/files/0123456789abcdef01234567", status: 404, error: "NotFound"),
        Case(description: "malformed id", method: "GET", path: "/files/..%2F..%2Froost.db", status: 404, error: "NotFound"),
        Case(description: "unknown meta", method: "GET", path: "/files/0123456789abcdef01234567/meta", status: 404, error: "NotFound"),
        Case(description: "unknown thumbnail", method: "GET", path: "/files/0123456789abcdef01234567/thumbnail?size=128", status: 404, error: "NotFound"),
        // Whether the file is there comes before what is asked of it (a bad size of a real file is 400: test_session_revocation.py).
        Case(description: "bad thumbnail size, unknown file", method: "GET", path: "/files/0123456789abcdef01234567/thumbnail?size=0", status: 404, error: "NotFound"),
        Case(description: "bad fit, unknown file", method: "GET", path: "/files/0123456789abcdef01234567/thumbnail?w=10&h=10&fit=stretch", status: 404, error: "NotFound"),
        Case(description: "unknown delete", method: "DELETE", path: "/files/0123456789abcdef01234567", status: 404, error: "NotFound"),
        Case(description: "an anonymous list of own uploads", method: "GET", path: "/files", status: 401, error: "Unauthorized"),
        Case(description: "PUT a file", method: "PUT", path: "/files/0123456789abcdef01234567", body: Data("x".utf8), status: 405, error: "MethodNotAllowed"),
        Case(description: "deeper path", method: "GET", path: "/files/0123456789abcdef01234567/meta/x", status: 404, error: "NotFound"),
    ]

    @Test func refusalsAreJSONAndLeaveNothingBehind() throws {
        let roost = try RoostProcess(config: Self.publicFiles)
        for c in Self.errorCases {
            var headers: [String: String] = [:]
            if let t = c.contentType { headers["Content-Type"] = t }
            let r = try HTTP.send(c.method, roost.baseURL + c.path, headers: headers, body: c.body)
            #expect(r.status == c.status, "\(c.description): \(r.text)")
            #expect(r.object["error"] as? String == c.error, "\(c.description): \(r.text)")
            #expect((r.object["description"] as? String)?.isEmpty == false, "\(c.description)")
        }
        // Nothing was stored, and the daemon still serves.
        let objects = roost.dataDir.appendingPathComponent("data/files/objects").path
        #expect((FileManager.default.enumerator(atPath: objects)?.allObjects as? [String] ?? []).allSatisfy { !$0.hasSuffix("7") || $0.count < 10 })
        #expect(Self.storedFiles(roost).isEmpty)
        #expect(try HTTP.send("GET", roost.baseURL + "/healthz").status == 200)
    }

    static func storedFiles(_ roost: RoostProcess) -> [String] {
        let root = roost.dataDir.appendingPathComponent("data/files/objects").path
        let all = FileManager.default.enumerator(atPath: root)?.allObjects as? [String] ?? []
        return all.filter { $0.split(separator: "/").count == 2 }
    }

    /// Tour My Town: raw PNG with its Content-Type, the id saved on a location, the same bytes back.
    @Test func seedClientFlow() throws {
        let roost = try RoostProcess(config: Self.publicFiles)
        let png = TestImages.png
        let up = try HTTP.send("POST", roost.baseURL + "/files", headers: ["Content-Type": "image/png"], body: png)
        #expect(up.status == 201, "\(up.text)")
        let id = try #require(up.object["_id"] as? String)
        #expect(up.object["contentType"] as? String == "image/png")
        #expect(up.object["size"] as? Int == png.count)
        #expect(up.object["width"] as? Int == 640 && up.object["height"] as? Int == 480)
        #expect((up.object["sha256"] as? String)?.count == 64)
        let place = try HTTP.json("POST", roost.baseURL + "/locations", ["name": "Pier 39", "location": [-122.41, 37.81], "imageId": id])
        #expect(place.status == 201)
        let saved = try HTTP.send("GET", roost.baseURL + "/locations/\(place.object["_id"] as! String)")
        let imageId = try #require(saved.object["imageId"] as? String)
        let back = try HTTP.send("GET", roost.baseURL + "/files/\(imageId)")
        #expect(back.status == 200)
        #expect(back.body == png)
        #expect(back.header("Content-Type") == "image/png")
        #expect(back.header("ETag") == "\"\(up.object["sha256"] as! String)\"")
        #expect(back.header("Cache-Control")?.contains("immutable") == true)
        #expect(back.header("Content-Disposition") == "inline")
    }

    @Test func thumbnailsHaveThePromisedSizes() throws {
        let roost = try RoostProcess(config: Self.publicFiles)
        for (data, type, thumbType) in [(TestImages.jpeg, "image/jpeg", "image/jpeg"), (TestImages.png, "image/png", "image/webp")] {
            let up = try HTTP.send("POST", roost.baseURL + "/files", headers: ["Content-Type": type], body: data)
            #expect(up.status == 201, "\(up.text)")
            let id = try #require(up.object["_id"] as? String)
            // The durable job finishes shortly; the metadata says so.
            var meta: [String: Any] = [:]
            for _ in 0..<100 {
                meta = try HTTP.send("GET", roost.baseURL + "/files/\(id)/meta").object
                let thumbs = meta["thumbnails"] as? [String: [String: Any]] ?? [:]
                if thumbs.values.allSatisfy({ $0["state"] as? String == "ready" }) && thumbs.count == 2 { break }
                Thread.sleep(forTimeInterval: 0.1)
            }
            let thumbs = try #require(meta["thumbnails"] as? [String: [String: Any]])
            for size in [128, 512] {
                #expect(thumbs["\(size)"]?["state"] as? String == "ready", "\(meta)")
                let t = try HTTP.send("GET", roost.baseURL + "/files/\(id)/thumbnail?size=\(size)")
                #expect(t.status == 200)
                #expect(t.header("Content-Type") == thumbType)
                let header = try TestImages.header(t.body)
                #expect(max(header.width, header.height) == size, "\(type) \(size): \(header)")
            }
            // Another variant, on demand: filled and cropped.
            let cover = try HTTP.send("GET", roost.baseURL + "/files/\(id)/thumbnail?w=100&h=40&fit=cover")
            #expect(cover.status == 200)
            let h = try TestImages.header(cover.body)
            #expect(h.width == 100 && h.height == 40)
            let contain = try HTTP.send("GET", roost.baseURL + "/files/\(id)/thumbnail?w=100&h=100&fit=contain")
            let c = try TestImages.header(contain.body)
            #expect(max(c.width, c.height) == 100 && min(c.width, c.height) < 100)
        }
    }

    @Test func onDemandThumbnailsAreSingleFlight() throws {
        let roost = try RoostProcess(config: Self.publicFiles + "thumbnail_workers: 1\n")
        let up = try HTTP.send("POST", roost.baseURL + "/files", headers: ["Content-Type": "image/jpeg"], body: TestImages.jpeg)
        let id = try #require(up.object["_id"] as? String)
        let results = LockedList()
        DispatchQueue.concurrentPerform(iterations: 16) { _ in
            if let r = try? HTTP.send("GET", roost.baseURL + "/files/\(id)/thumbnail?w=300&h=300&fit=cover") {
                results.append((r.status, r.header("ETag")))
            }
        }
        #expect(results.items.count == 16)
        #expect(results.items.allSatisfy { $0.0 == 200 })
    }

    @Test func conditionalRangeAndDisposition() throws {
        let roost = try RoostProcess(config: Self.publicFiles)
        let html = Data("<html><script>alert(1)</script></html>".utf8)
        let up = try HTTP.send("POST", roost.baseURL + "/files", headers: ["Content-Type": "text/html"], body: html)
        #expect(up.status == 201)
        #expect(up.object["width"] == nil && up.object["thumbnails"] == nil)
        let id = try #require(up.object["_id"] as? String)
        let url = roost.baseURL + "/files/\(id)"
        let full = try HTTP.send("GET", url)
        #expect(full.header("Content-Disposition")?.hasPrefix("attachment") == true)
        #expect(full.header("X-Content-Type-Options") == "nosniff")
        let etag = try #require(full.header("ETag"))
        let again = try HTTP.send("GET", url, headers: ["If-None-Match": etag])
        #expect(again.status == 304)
        #expect(again.body.isEmpty)
        let part = try HTTP.send("GET", url, headers: ["Range": "bytes=6-13"])
        #expect(part.status == 206)
        #expect(part.body == html[6...13])
        #expect(part.header("Content-Range") == "bytes 6-13/\(html.count)")
        let suffix = try HTTP.send("GET", url, headers: ["Range": "bytes=-7"])
        #expect(suffix.body == html.suffix(7))
        let bad = try HTTP.send("GET", url, headers: ["Range": "bytes=9999-"])
        #expect(bad.status == 416)
        #expect(bad.header("Content-Range") == "bytes */\(html.count)")
        let noThumb = try HTTP.send("GET", url + "/thumbnail?size=128")
        #expect(noThumb.status == 404)

        // multipart/form-data with one file part
        let boundary = "roost-boundary-42"
        var form = Data("--\(boundary)\r\nContent-Disposition: form-data; name=\"caption\"\r\n\r\nhello\r\n".utf8)
        form += Data("--\(boundary)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"me.png\"\r\nContent-Type: image/png\r\n\r\n".utf8)
        form += TestImages.png + Data("\r\n--\(boundary)--\r\n".utf8)
        let multi = try HTTP.send("POST", roost.baseURL + "/files", headers: ["Content-Type": "multipart/form-data; boundary=\(boundary)"], body: form)
        #expect(multi.status == 201, "\(multi.text)")
        #expect(multi.object["name"] as? String == "me.png")
        #expect(multi.object["size"] as? Int == TestImages.png.count)
        let mid = try #require(multi.object["_id"] as? String)
        #expect(try HTTP.send("GET", roost.baseURL + "/files/\(mid)").body == TestImages.png)

        // DELETE removes the row, the bytes and the thumbnails.
        #expect(try HTTP.send("DELETE", roost.baseURL + "/files/\(mid)").status == 200)
        #expect(try HTTP.send("GET", roost.baseURL + "/files/\(mid)").status == 404)
        #expect(try HTTP.send("GET", roost.baseURL + "/files/\(mid)/meta").status == 404)
        Thread.sleep(forTimeInterval: 0.3)
        #expect(Self.storedFiles(roost).count == 1)
    }

    @Test func sharedFilesNeedASession() throws {
        let roost = try RoostProcess(config: "files_permission: shared\n")
        let anonymous = try HTTP.send("POST", roost.baseURL + "/files", headers: ["Content-Type": "image/png"], body: TestImages.png)
        #expect(anonymous.status == 401)
        let signUp = try HTTP.json("POST", roost.baseURL + "/users", ["username": "ada", "password": "correct horse battery"])
        let token = try #require(signUp.object["token"] as? String)
        let auth = ["Authorization": "Bearer \(token)"]
        let up = try HTTP.send("POST", roost.baseURL + "/files", headers: auth.merging(["Content-Type": "image/png"]) { a, _ in a }, body: TestImages.png)
        #expect(up.status == 201, "\(up.text)")
        let id = try #require(up.object["_id"] as? String)
        #expect((up.object["_acl"] as? [String: Any])?["creator"] as? String == (signUp.object["user"] as? [String: Any])?["_id"] as? String)
        #expect(try HTTP.send("GET", roost.baseURL + "/files/\(id)", headers: auth).status == 200)
        #expect(try HTTP.send("GET", roost.baseURL + "/files/\(id)").status == 401)
    }

    @Test func fullUploadQueueAnswers503WithRetryAfter() throws {
        let roost = try RoostProcess(config: Self.publicFiles + "upload_workers: 1\nupload_queue: 1\n")
        let results = LockedList()
        let big = TestImages.make(2000, 1500, .png)
        let done = DispatchGroup()
        for _ in 0..<32 {
            done.enter()
            Thread.detachNewThread {
                if let r = try? HTTP.send("POST", roost.baseURL + "/files", headers: ["Content-Type": "image/png"], body: big) {
                    results.append((r.status, r.header("Retry-After")))
                }
                done.leave()
            }
        }
        done.wait()
        let items = results.items
        #expect(items.count == 32)
        #expect(items.contains { $0.0 == 503 && $0.1 != nil }, "\(items.map(\.0))")
        #expect(items.allSatisfy { $0.0 == 201 || $0.0 == 503 })
        #expect(Self.storedFiles(roost).count == items.filter { $0.0 == 201 }.count)
    }
}
