import GLibCore
import GStreamer
import MediaPipeline
import Synchronization

/// The torch, for `FLASH_ON`/`FLASH_OFF` requests and `setFlashlightEnabled(state:)`.
/// Headless Linux has none: without a handler the SDK answers agents `UNAVAILABLE`.
///
/// Approval is never assumed: a handler that does not implement `approve(turningOn:)` refuses
/// every agent request (`FLASH_REFUSED`) and its torch is never switched by an agent. Implement it
/// to ask the user, and answer within the agent's flash timeout.
public protocol FlashlightHandler: Sendable {
    /// Asks the user whether the agent may switch the torch (EnQualify's approval step).
    /// The default refuses.
    func approve(turningOn: Bool) async -> Bool
    /// Switches the torch; false when it cannot.
    func setTorch(on: Bool) async -> Bool
}

extension FlashlightHandler {
    /// Refuses: nobody asked the user.
    public func approve(turningOn: Bool) async -> Bool { false }
}

