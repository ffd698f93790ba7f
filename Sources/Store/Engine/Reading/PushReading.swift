import JSON

/// Push devices and the push outbox.
public protocol PushReading: AnyObject {
    func devices(userIDs: [String]) throws -> [PushDevice]
    func duePushes(now: Int64, limit: Int) throws -> [DuePush]
    func syncDevices(limit: Int) throws -> [PushDevice]
    func nextPushDue() throws -> Int64?
    func pushDeviceReports(limit: Int) throws -> [PushDeviceReport]
    func pushDeliveries(status: String?, limit: Int) throws -> [PushDeliveryRecord]
    func pushDelivery(rid: Int64) throws -> PushDeliveryRecord?
}
