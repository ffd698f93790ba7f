/// What a provider's answer to one push means for the outbox.
public enum ProviderVerdict: Sendable, Equatable {
    case delivered
    /// Try again later (429, 5xx, a transport error), not before `retryAfter` seconds when given.
    case retry(retryAfter: Int?, reason: String)
    /// The provider's credential expired (APNs 403 `ExpiredProviderToken`, FCM 401): refresh it once and resend now.
    case refreshCredential(reason: String)
    /// APNs 400 `BadDeviceToken`: the token may belong to the other environment; try it there once.
    case tryOtherEnvironment(reason: String)
    /// The token is dead: remove the device (APNs 410 only if registered before `ifSeenBefore`, in ms).
    case removeDevice(reason: String, ifSeenBefore: Int64?)
    /// Never deliverable as it is (a bad payload or topic): give up, keep the device.
    case dead(reason: String)
}
