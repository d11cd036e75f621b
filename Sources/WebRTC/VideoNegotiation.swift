import GStreamer
import MediaPipeline
import MediaRuntime

/// Which video codec a call sends, decided the way browsers decide it: the offer lists every
/// codec its side can send and receive, most preferred first (`VideoCodecPreference.offerCaps`),
/// and the answer names the first of them the answerer can handle. The send graph is compiled
/// for the preferred codec; when the negotiation picks another one, its encoding is replaced
/// (`SendMedia.replaceVideoEncoding`) before the video output is linked to webrtcbin.
extension PeerConnection {
    /// The offerer's video: offered as every codec of the preference, linked once the answer
    /// names one (see `sendVideo(asAnsweredIn:session:)`).
    func offerEveryVideoCodec(on session: PeerSession) throws(PeerError) {
        guard let preference = videoPreference, media?.output(.video) != nil else {
            try session.linkOutputs()
            return
        }
        do throws(GStreamerError) {
            try session.setCodecPreferences(.video, Caps(preference.offerCaps))
        } catch {
            throw .setup("cannot offer the video codecs \(preference): \(error)")
        }
        try session.linkOutputs(except: [.video])
    }

    /// The offerer, once the answer is applied: sends the video as the codec the answer chose,
    /// or reports that the answer took none of ours.
    func sendVideo(asAnsweredIn answer: String, session: PeerSession) async {
        guard session.pendingKinds.contains(.video), let preference = videoPreference else { return }
        let section = SDPMediaSections.parse(answer).first { $0.kind == .video }
        // The answer's direction is the answerer's: it receives our video in sendrecv and recvonly.
        let accepted = section.map { !$0.isRejected && ["sendrecv", "recvonly"].contains($0.direction) } ?? false
        guard let section, accepted, let (codec, format) = OfferedFormats.chooseVideo(in: section, from: preference) else {
            session.dropPendingOutput(.video)
            // An inactive or rejected answer lists what we offered, not what the far end takes.
            emit(.noCommonCodec(kind: .video, ours: preference.codecs.map(\.rawValue), theirs: accepted ? OfferedFormats.codecNames(in: section) : []))
            return
        }
        guard await prepareVideoSend(codec, payloadType: format.payloadType), session === self.session else {
            session.dropPendingOutput(.video)
            return
        }
        // webrtcbin checks the caps reaching its pad against the codec preferences: the offered
        // H.264 `profile-level-id` is not what the encoder's parameter sets announce.
        do throws(GStreamerError) {
            try session.setCodecPreferences(.video, Caps(OfferedFormats.codecPreferences(for: format, kind: .video, in: section)))
        } catch {
            emit(.error("cannot narrow the video codec preferences to \(format): \(error)"))
        }
        negotiation.offeredFormats[.video] = format
        do throws(PeerError) { try session.linkOutputs() } catch {
            emit(.error("cannot link the video we send: \(error)"))
        }
    }

    /// The answerer: the video goes out as the first codec of the remote offer this end accepts.
    /// Returns the offer's format for it, or nil (with the event saying why) when none fits.
    func answerVideo(to section: SDPMediaSection?, session: PeerSession) async -> SDPFormat? {
        guard let preference = videoPreference else { return nil }
        guard let section, !section.isRejected else {
            emit(.unmatchedMedia(kind: .video, reason: "the remote offer has no video section; our video is not sent"))
            return nil
        }
        guard let (codec, format) = OfferedFormats.chooseVideo(in: section, from: preference) else {
            // webrtcbin would answer the offer's codec as receive-only on a transceiver of its
            // own: the answer makes the section inactive, so the far end sends nothing we refuse.
            // Reported once the answer is out (see `receiveOffer`), so the far end learns it from
            // the answer before this end acts on it.
            negotiation.refusedKinds.insert(.video)
            negotiation.unanswerable.append(.noCommonCodec(kind: .video, ours: preference.codecs.map(\.rawValue), theirs: OfferedFormats.codecNames(in: section)))
            return nil
        }
        guard await prepareVideoSend(codec, payloadType: format.payloadType), session === self.session else { return nil }
        return format
    }

    /// Makes the send graph encode `codec` (replacing its video encoding if it runs another
    /// codec) with `payloadType`, and waits (bounded) until the payloader announces it. A
    /// replaced encoding that has sent nothing after 2 s is built once more: a safety net for
    /// what made new encodings stay silent before (frames passing an idle block, a swap while the
    /// pipeline started, a raw format the new encoder refused), each fixed where it happened.
    private func prepareVideoSend(_ codec: VideoCodec, payloadType: Int) async -> Bool {
        guard let media else { return false }
        let replacing = media.videoEncodingName != codec.rawValue
        // An offer can arrive while the pipeline is still on its way to PLAYING (a room hands a
        // stored offer over at once); elements swapped in meanwhile could miss the transition.
        let startDeadline = ContinuousClock.now + .seconds(15)
        while replacing, !started, !isClosed, ContinuousClock.now < startDeadline {
            // Cancelled: the wait ends early and the swap goes ahead.
            try? await Task.sleep(for: .milliseconds(10))
        }
        for attempt in 1...(replacing ? 2 : 1) {
            if replacing, !replaceVideoEncoding(with: codec, media: media) { return false }
            do throws(MediaRuntimeError) { try media.setPayloadType(.video, to: payloadType) } catch {
                emit(.error("cannot send video with payload type \(payloadType): \(error)"))
                return false
            }
            let deadline = ContinuousClock.now + .seconds(2)
            while media.payloadType(.video) != payloadType, ContinuousClock.now < deadline {
                // Cancelled: the wait ends early and the check after it decides.
                try? await Task.sleep(for: .milliseconds(5))
            }
            if media.payloadType(.video) == payloadType { return true }
            emit(.error("the video payloader did not switch to payload type \(payloadType) within 2 s"
                        + (replacing && attempt == 1 ? "; building the \(codec.rawValue) encoding again" : "")))
        }
        return true
    }

    private func replaceVideoEncoding(with codec: VideoCodec, media: SendMedia) -> Bool {
        guard let pipeline = mediaPipeline else { return false }
        var parameters = configuration.media.parameters
        parameters.videoCodec = codec.rawValue
        do {
            try media.replaceVideoEncoding(with: try compileSendGraph(parameters: parameters), in: pipeline)
            return true
        } catch {
            emit(.error("cannot send video as \(codec.rawValue), the codec the negotiation chose: \(error)"))
            return false
        }
    }
}

/// The one wording of a failed codec negotiation, for every product's error event.
package enum NoCommonCodec {
    package static func message(kind: String, ours: [String], theirs: [String]) -> String {
        let far = theirs.isEmpty ? "the far end accepted none of them" : "the far end offers \(theirs.joined(separator: ", "))"
        return "no \(kind) codec in common: this end accepts \(ours.joined(separator: ", ")), \(far)"
    }
}
