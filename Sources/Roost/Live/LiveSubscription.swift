import HTTP
import JSON
import Store

/// What a live stream asked for: one or more collections, each with an
/// optional MongoDB filter, read with the caller's rights.
struct LiveSubscription: Sendable {
    struct Topic: Sendable {
        let collection: String
        let filter: JSONValue
        /// The filter's JSON text: subscribers with the same one share its compiled probe.
        let key: String
    }

    let topics: [Topic]
    static let maxTopics = 32

    /// `GET /events?subscribe=[{"collection":…,"query":{…}}, …]`.
    static func parse(subscribe text: String?) throws -> LiveSubscription {
        guard let text, !text.isEmpty else {
            throw HTTPError(.invalidQuery, "Name what to follow: subscribe=[{\"collection\":\"messages\"}, …].")
        }
        let value: JSONValue
        do { value = try JSONParser.parse(text) } catch {
            throw HTTPError(.invalidQuery, "subscribe is not valid JSON: \(error).")
        }
        guard case .array(let list) = value, !list.isEmpty, list.count <= maxTopics else {
            throw HTTPError(.invalidQuery, "subscribe must be a list of 1 to \(maxTopics) {\"collection\", \"query\"} objects.")
        }
        return LiveSubscription(topics: try list.map { item in
            guard case .object(let o) = item, case .string(let collection)? = o["collection"] else {
                throw HTTPError(.invalidQuery, "Each subscription names its collection: {\"collection\": \"messages\"}.")
            }
            return try topic(collection, o["query"] ?? .object(JSONObject()))
        })
    }

    /// `GET /:collection/_live?query=…`.
    static func one(_ collection: String, query: JSONValue) throws -> LiveSubscription {
        LiveSubscription(topics: [try topic(collection, query)])
    }

    private static func topic(_ collection: String, _ filter: JSONValue) throws -> Topic {
        let known = collection == AccessPolicy.usersCollection || collection == "files"
        guard known || (CollectionName.isWellFormed(collection) && !CollectionName.isReserved(collection)) else {
            throw HTTPError(.invalidCollectionName, "\"\(collection)\" is not a collection that can be followed.")
        }
        guard case .object = filter else { throw HTTPError(.invalidQuery, "A subscription's query must be a JSON object.") }
        return Topic(collection: collection, filter: filter, key: filter.jsonText)
    }
}
