/// What two peers exchange to connect: AppRTC's payloads, independent of the transport.
package enum SignalingMessage: Sendable, Equatable {
    case offer(sdp: String)
    case answer(sdp: String)
    /// A trickled ICE candidate: `mlineIndex` is AppRTC's `label`, `mid` its `id`.
    case candidate(mlineIndex: Int, mid: String?, candidate: String)
    case bye
}
