import ECVProtocol
import MediaRuntime
import WebRTC

/// The call controls of the seed guide, each emitting its event.
extension WebRtcConnection {
    /// Mutes (false) or unmutes the microphone: `AudioMuted`/`AudioUnmuted`, and the agent is told
    /// (`STATUS|AUDIO|MUTED|<rtcId>`). The remote side hears silence; timing continues.
    public func setAudioEnabled(state: Bool) {
        controls.withLock { $0.audioEnabled = state }
        applyMediaState()
        call.emit(state ? .AudioUnmuted : .AudioMuted)
        sendCommand(.status(media: .audio, muted: !state, rtcId: call.rtcId))
    }

    /// Disables (false) or enables the camera: `VideoMuted`/`VideoUnmuted`; the agent sees black
    /// frames and is told (`STATUS|VIDEO|MUTED|<rtcId>`).
    public func setVideoEnabled(state: Bool) {
        controls.withLock { $0.videoEnabled = state }
        applyMediaState()
        call.emit(state ? .VideoUnmuted : .VideoMuted)
        sendCommand(.status(media: .video, muted: !state, rtcId: call.rtcId))
    }

    /// Switches between the registered front and back sources (a pad switch, no renegotiation).
    public func switchCamera() async throws {
        guard let media = await peerConnection?.media else {
            let error = ErrorObject(name: .CAMERA_SWITCH_FAILED, message: "the call has no running video")
            call.fail(error.name, error.message, endingCall: false)
            throw CallControlError(error)
        }
        do {
            let camera = try media.toggleCamera()
            Logger.info("[\(call.rtcId)] camera: \(camera)")
        } catch {
            call.fail(.CAMERA_SWITCH_FAILED, error.description, endingCall: false)
            throw CallControlError(call.lastError)
        }
    }

    /// Switches the torch through the `flashlightHandler`: `FlashOn`/`FlashOff`, or an `Error`
    /// (`FLASHLIGHT_UNAVAILABLE`) when there is none (every headless machine by default).
    public func setFlashlightEnabled(state: Bool) {
        guard let handler = flashlightHandler else {
            call.fail(.FLASHLIGHT_UNAVAILABLE, "no flashlight handler is installed on this device", endingCall: false)
            return
        }
        Task {
            if await handler.setTorch(on: state) {
                call.emit(state ? .FlashOn : .FlashOff)
            } else {
                call.fail(.FLASHLIGHT_UNAVAILABLE, "the flashlight handler could not switch the torch", endingCall: false)
            }
        }
    }

    /// Sends a custom text message on the text channel (queued until it opens).
    public func sendTextMessage(_ text: String) {
        guard let channel = textChannel else {
            call.fail(.TEXT_CHANNEL_ERROR, "the text channel is not enabled or not created yet", endingCall: false)
            return
        }
        do { try channel.send(text) } catch {
            call.fail(.TEXT_CHANNEL_ERROR, error.description, endingCall: false)
        }
    }

    func sendCommand(_ command: DataChannelCommand) {
        guard let channel = textChannel, !live.withLock({ $0.closed }) else { return }
        do { try channel.send(command.text) } catch {
            Logger.warn("[\(call.rtcId)] cannot send \(command.text): \(error)")
        }
    }

    /// Applies what the app asked for, minus what a hold imposes, to the running graph.
    func applyMediaState() {
        let (audioOn, videoOn) = controls.withLock { ($0.audioEnabled && !$0.onHold, $0.videoEnabled && !$0.onHold) }
        Task {
            guard let media = await peerConnection?.media else { return }
            try? media.setAudioMuted(!audioOn)
            if parameters.videoCallEnabled { try? media.setVideoMuted(!videoOn) }
        }
    }
}

/// A call control failed; the `ErrorObject` is also the call's `lastError`.
public struct CallControlError: Error, Sendable, CustomStringConvertible {
    public let error: ErrorObject
    init(_ error: ErrorObject) { self.error = error }
    public var description: String { error.description }
}
