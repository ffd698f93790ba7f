/// A note, as the unit tests decode entities.
struct Note: Codable, Sendable, Equatable {
    var title: String
    var body: String?
    var stars: Int?
}
