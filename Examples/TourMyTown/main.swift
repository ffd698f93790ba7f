// TourMyTown: places with a photo, found by geo queries, added offline. The
// model layer of the Tour My Town app run as a command-line walk-through; see
// README.md beside this file.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import RoostKit

/// A place: a name, a point, categories and a photo (a file id).
struct Place: Codable, Sendable {
    var name: String
    var location: GeoPoint
    var categories: [String]
    var photo: String?
}

/// A network the walk-through can switch off, as a phone in a tunnel.
final class Network: HTTPTransport, @unchecked Sendable {
    private let real = URLSessionTransport()
    private let online = NSLock()
    private var isOnline = true
    var up: Bool {
        get { online.lock(); defer { online.unlock() }; return isOnline }
        set { online.lock(); isOnline = newValue; online.unlock() }
    }
    func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        guard up else { throw URLError(.notConnectedToInternet) }
        return try await real.send(request)
    }
    func stream(_ request: URLRequest) async throws -> (HTTPURLResponse, AsyncThrowingStream<Data, Error>) {
        guard up else { throw URLError(.notConnectedToInternet) }
        return try await real.stream(request)
    }
}

func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

func argument(_ name: String) -> String? {
    let args = CommandLine.arguments
    guard let i = args.firstIndex(of: name), i + 1 < args.count else { return nil }
    return args[i + 1]
}

guard let server = URL(string: argument("--server") ?? ProcessInfo.processInfo.environment["ROOST_URL"] ?? "http://127.0.0.1:8080"),
      let photoPath = argument("--photo") else {
    say("usage: TourMyTown --photo IMAGE [--server URL] [--home DIR]")
    exit(2)
}
let home = URL(fileURLWithPath: argument("--home") ?? NSTemporaryDirectory() + "tourmytown-\(UUID().uuidString)")

let network = Network()
let roost = RoostClient(baseURL: server, tokenStore: FileTokenStore(url: home.appendingPathComponent("session.json")), transport: network)

do {
    // 1. An account, and a photo for the places.
    let me = try await roost.signUp(username: "tourist-\(UUID().uuidString.prefix(6).lowercased())", password: "see the sights",
                                    profile: ["firstName": "Tess"])
    say("signed up: \(me.user.username)")
    let photo = try await roost.files.upload(Data(contentsOf: URL(fileURLWithPath: photoPath)), contentType: "image/png")
    say("photo: \(photo.id) \(photo.contentType) \(photo.width ?? 0)x\(photo.height ?? 0)")

    // 2. Places, created on the server.
    let places = roost.collection("locations", of: Place.self)
    let sights = [
        Place(name: "Golden Gate Park", location: GeoPoint(-122.4862, 37.7694), categories: ["Park"], photo: photo.id),
        Place(name: "de Young", location: GeoPoint(-122.4686, 37.7715), categories: ["Museum", "Park"], photo: photo.id),
        Place(name: "Coit Tower", location: GeoPoint(-122.4058, 37.8024), categories: ["Landmark"], photo: nil),
        Place(name: "Central Park", location: GeoPoint(-73.9654, 40.7829), categories: ["Park"], photo: nil),
    ]
    let batch = try await roost.batch(try sights.map { try BatchOperation.create("locations", $0) })
    say("created: \(batch.count) places in one batch")

    // 3. Geo queries on the server: nearest first, a radius, a polygon.
    let here = GeoPoint(-122.47, 37.771)
    let nearby = try await places.find(Query(Field("location").near(here, maxDistance: 2500)))
    say("nearby: " + nearby.map(\.value.name).joined(separator: ", "))
    let parks = try await places.find(Query(Field("location").within(radius: 10_000, of: here) && Field("categories").isIn(["Park"])).sorted(by: "name"))
    say("parks within 10 km: " + parks.map(\.value.name).joined(separator: ", "))
    let downtown = try await places.find(Query(Field("location").within(polygon: [GeoPoint(-122.42, 37.79), GeoPoint(-122.39, 37.79),
                                                                                   GeoPoint(-122.39, 37.81), GeoPoint(-122.42, 37.81)])))
    say("in the downtown polygon: " + downtown.map(\.value.name).joined(separator: ", "))
    let withPhoto = try require2(nearby.first?.value.photo)
    let thumbnail = try await roost.files.thumbnail(withPhoto, size: 128)
    say("thumbnail: \(thumbnail.count) bytes")

    // 4. Offline: the places are mirrored; one is added in a tunnel, with its
    // photo queued for upload, and found locally.
    let store = try OfflineStore(client: roost, url: home.appendingPathComponent("\(me.user.id).sqlite"), mirrors: [Mirror("locations")])
    try await store.sync()
    let local = store.collection("locations", of: Place.self)
    let uploads = try FileUploadQueue(client: roost, directory: home.appendingPathComponent("uploads"), automatic: false)
    network.up = false
    let palace = try await local.create(Place(name: "Palace of Fine Arts", location: GeoPoint(-122.4484, 37.8029), categories: ["Landmark"]))
    let palacePhoto = try uploads.enqueue(contentsOf: URL(fileURLWithPath: photoPath), contentType: "image/png")
    let offlineNearby = try await local.find(Query(Field("location").near(GeoPoint(-122.45, 37.80), maxDistance: 1000)))
    let pending = try await store.pendingWrites().count
    say("offline nearby: " + offlineNearby.map(\.value.name).joined(separator: ", ") + " (\(pending) waiting)")
    do { try await store.sync() } catch let error as RoostError where error.isOffline { say("sync: offline, kept") }
    say("photo upload: \(await uploads.sendPending().remaining) queued")
    network.up = true
    // Back online: the photo goes first, then the place, pointing at it.
    let uploaded = try await uploads.uploaded(palacePhoto.id)
    _ = try await local.patch(palace.id, ["photo": .string(uploaded.id)])
    let report = try await store.sync()
    say("synced: sent \(report.sent), conflicts \(report.conflicts)")
    let onServer = try await places.find(Query(Field("name") == "Palace of Fine Arts"))
    say("on the server: \(onServer.count == 1 ? "yes" : "no"), photo \(onServer.first?.value.photo == uploaded.id ? "attached" : "missing")")
    let cached = try await roost.files.localURL(of: uploaded.id, thumbnailSize: 64, in: home.appendingPathComponent("images"))
    say("photo for AsyncImage: \(cached.isFileURL ? "a local file" : "a remote URL")")
} catch {
    say("error: \(error)")
    exit(1)
}

/// Unwraps or fails the walk-through.
func require2<T>(_ value: T?) throws -> T {
    guard let value else { throw RoostError.invalidResponse("missing value") }
    return value
}
