/// The webhook outbox and its endpoints.
public protocol WebhooksWriting: AnyObject {
    func hasSubscribers(_ type: String) throws -> Bool
    func enqueueEvent(type: String, data: String) throws -> String?
    func recordAttempt(rid: Int64, attempt: Int, status: Int?, error: String?, durationMilliseconds: Int, outcome: DeliveryOutcome) throws
    func requeueDelivery(rid: Int64) throws -> Bool
    func webhookEndpoints() throws -> [WebhookEndpointRecord]
    func saveWebhookEndpoint(_ e: WebhookEndpointRecord, keepDisabled: Bool) throws
    func syncConfigWebhookEndpoints(_ endpoints: [WebhookEndpointRecord]) throws
    func deleteWebhookEndpoint(name: String) throws -> Bool
    func setWebhookEndpointDisabled(name: String, reason: String?) throws -> Bool
}
