import ECV

// iOS SDK guide, Turkish edition, §7.1 "Call transfer" (v1.0.18.45+): a transferred leg is never
// dialed again; it only waits on the queue socket with its new rtcId.

/// The guide's one line, in the call set-up it belongs to: `call` was created with
/// `createVideoCall(rtcId:)` and the new rtcId of `TransferCompleted`.
func waitForTheTransferredLeg(call: VideoCall?, isTransferred: Bool) async {
    if isTransferred { call?.isDialed = true; _ = await call?.createQueueSocket(); return }
}
