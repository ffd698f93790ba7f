import JSON

/// The webhook outbox: due and listed deliveries, endpoints.
public protocol WebhooksReading: AnyObject {
    func dueDeliveries(now: Int64, limit: Int) throws -> [DueDelivery]
    func nextDeliveryDue() throws -> Int64?
    func deliveries(status: String?, limit: Int) throws -> [WebhookDeliveryRecord]
    func delivery(rid: Int64) throws -> WebhookDeliveryRecord?
    func pendingDeliveryCount() throws -> Int
    func webhookEndpoints() throws -> [WebhookEndpointRecord]
}
