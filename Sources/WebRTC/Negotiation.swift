import Foundation
import GStreamer
import MediaPipeline
import MediaRuntime

/// Per-session negotiation bookkeeping.
/// Where the offer's wait for the send pads' caps is: not waiting, waiting (outside the order of
/// operations), or over (caps came, or 3 s passed) and not yet taken by the negotiation it repeats.
enum SendCapsWait { case idle, running, ended }

/// What this side sends, as an offer describes it: each send output's caps' media type (nil
/// before caps) and whether it is linked to webrtcbin, and the local data channels' labels.
struct SendSignature: Equatable {
    struct Output: Equatable {
        var linked: Bool
        var mediaType: String?
    }
    var outputs: [Output]
    var channels: [String]

    /// True when an offer made at `self` no longer describes `now`: a data channel came or went,
    /// or an output linked then changed (its caps came after an offer that waited them out, so
    /// the offer named no stream for it). An output held back then (the offerer's video, linked
    /// once the answer names its codec) is covered by the answer that links it, caps or not: an
    /// offer repeated for it narrowed the video to the answered codec, which a far end limited by
    /// its preferences to another codec refused (aiortc, when our encoder started late).
    func isOutdated(by now: SendSignature) -> Bool {
        channels != now.channels || outputs.count != now.outputs.count
            || zip(outputs, now.outputs).contains { offered, current in offered.linked && offered != current }
    }
}

struct NegotiationState {
    var inProgress = false
    var pending = false
    /// The offer's wait for the send pads' caps (see `sendCapsArrivedOrWaitedOut`).
    var sendCapsWait = SendCapsWait.idle
    /// What we sent when the current offer was made (see `PeerSession.localSignature`).
    var offeredSignature = SendSignature(outputs: [], channels: [])
    var remoteDescriptionSet = false
    /// Remote candidates that arrived before the remote description; applied right after it.
    var queuedCandidates: [(mlineIndex: Int, candidate: String)] = []
    var localMids: [Int: String] = [:]
    /// SSRC → kind announced in both descriptions (stats need it before any pad has caps).
    var sdpKinds: [UInt: MediaKind] = [:]
    var remoteICEUfrag: String?
    var localOfferSessionID: String?
    /// The remote offer's format each of our outputs goes out as (answerer only).
    var offeredFormats: [MediaKind: SDPFormat] = [:]
    /// Kinds the remote offer had no codec for that we accept: our answer makes them inactive.
    var refusedKinds: Set<MediaKind> = []
    /// What to report of them once the answer has gone out.
    var unanswerable: [PeerEvent] = []
    /// What the completed offer/answer agreed on, by kind.
    var negotiated: [MediaKind: NegotiatedCodec] = [:]
}

extension PeerConnection {
    /// Creates, applies and sends an offer. A request while one is running is remembered and
    /// repeated after the answer only if what we send changed since the offer was made, because
    /// webrtcbin 1.22 signals negotiation-needed several times while pads get linked and caps arrive.
    func negotiate() async {
        guard let session else { return }
        // webrtcbin's own state: the observed one lags behind notifications still in the inbox.
        guard !negotiation.inProgress, SignalingState(session.webrtc) == .stable else {
            negotiation.pending = true
            return
        }
        // An offer made before every send pad has caps leaves media out of the SDP.
        guard sendCapsArrivedOrWaitedOut(session) else { return }
        negotiation.offeredSignature = session.localSignature(channels: channels)
        negotiation.inProgress = true
        emit(.stateChanged(peerState == .new ? .connecting : peerState))
        do throws(GStreamerError) {
            // webrtcbin 1.22 can still leave out a stream whose caps it has not taken yet; an offer
            // missing one of our kinds is dropped and made again a moment later.
            var offer = try await session.webrtc.createOffer()
            for _ in 0..<40 where !SDPInspection.includes(kinds: session.sentKinds, offer.sdp) {
                // Cancelled: the wait ends early and the loop or the guard after it decides.
                try? await Task.sleep(for: .milliseconds(50))
                offer = try await session.webrtc.createOffer()
            }
            guard session === self.session else { return }
            guard offer.sdp.contains("\nm=") else {
                negotiation.inProgress = false
                return
            }
            var sdp = withOurFingerprint(offer.sdp, session)
            if configuration.media.parameters.lossRecovery.retransmission { sdp = SDPRewrite.addingRTXForEveryVideoCodec(sdp) }
            offer = SessionDescription(kind: .offer, sdp: sdp)
            try await session.webrtc.setLocalDescription(offer)
            negotiation.localMids = SDPInspection.mids(offer.sdp)
            negotiation.sdpKinds.merge(SDPInspection.ssrcKinds(offer.sdp)) { _, new in new }
            negotiation.localOfferSessionID = SDPInspection.sessionID(offer.sdp)
            send(.offer(sdp: offer.sdp))
            emit(.sentOffer(offer.sdp))
        } catch {
            negotiation.inProgress = false
            emit(.error("offer failed: \(error)"))
        }
    }

    /// True when the offer can be made now: every send pad has caps, or their wait is over.
    /// Otherwise starts (once per session) the wait, outside the order of operations, which
    /// negotiates again when it ends. The caps come with an application source's first buffer,
    /// and an application pushes that once `start()` returned: waiting inside the order of
    /// operations held `start()` (and every control queued behind it) for the wait's full 3 s,
    /// so an application-fed offerer offered 3.3 s after start (`bench-call lip-sync`).
    private func sendCapsArrivedOrWaitedOut(_ session: PeerSession) -> Bool {
        if session.sendPadsHaveCaps { return true }
        switch negotiation.sendCapsWait {
        case .ended:
            negotiation.sendCapsWait = .idle
            return true
        case .running:
            return false
        case .idle:
            negotiation.sendCapsWait = .running
            Task { [weak self, session] in
                guard let self else { return }
                await self.waitForSendCaps(session)
                self.submit { peer in
                    guard session === peer.session else { return }
                    peer.negotiation.sendCapsWait = .ended
                    await peer.negotiate()
                }
            }
            return false
        }
    }

    /// Waits (at most 3 s) until every send pad linked to webrtcbin has caps, looking every 2 ms:
    /// the caps come a few ms after the pipeline plays (or with an application source's first
    /// buffer), and a 20 ms step made every offer wait 20 ms, on every call's set-up path
    /// (`bench-call setup`: the agent bot offers). Ends as soon as `session` is closed or
    /// replaced: the wait holds it, and with it webrtcbin and its elements.
    private func waitForSendCaps(_ session: PeerSession) async {
        let deadline = ContinuousClock.now + .seconds(3)
        while session === self.session, !session.sendPadsHaveCaps, ContinuousClock.now < deadline {
            // Cancelled: the wait ends early and the loop or the guard after it decides.
            try? await Task.sleep(for: .milliseconds(2))
        }
    }

    /// Hands a message from the remote peer to the order of operations and returns once it has
    /// been applied (or the peer closed).
    package nonisolated func receive(_ message: SignalingMessage) async {
        await perform { await $0.apply(remote: message) }
    }

    private func apply(remote message: SignalingMessage) async {
        guard !isClosed else { return }
        switch message {
        case .offer(let sdp): await receiveOffer(sdp)
        case .answer(let sdp): await receiveAnswer(sdp)
        case .candidate(let mline, _, let candidate): addRemoteCandidate(mlineIndex: mline, candidate: candidate)
        case .bye: emit(.stateChanged(.closed)); close()
        }
    }

    private func receiveOffer(_ sdp: String) async {
        emit(.receivedOffer(sdp))
        if negotiation.inProgress, let ours = negotiation.localOfferSessionID {
            // Glare: both sides offered. The offer with the larger session id wins on both sides;
            // the loser rebuilds (webrtcbin 1.22 cannot roll back) and answers.
            let theirs = SDPInspection.sessionID(sdp) ?? ""
            if SDPInspection.sessionIDOrder(ours, theirs) {
                emit(.error("glare: ignoring the remote offer, ours wins"))
                return
            }
            becomeAnswerer()
            do throws(PeerError) { try replaceSession() } catch {
                emit(.error("glare: cannot rebuild: \(error)"))
                return
            }
        } else if negotiation.remoteDescriptionSet, let ufrag = negotiation.remoteICEUfrag,
                  SDPInspection.iceUfrag(sdp) != ufrag {
            // A new remote webrtcbin (it was rebuilt): ICE cannot restart, so rebuild too.
            do throws(PeerError) { try replaceSession() } catch {
                emit(.error("cannot rebuild for the remote's new session: \(error)"))
                return
            }
        }
        guard let session else { return }
        if !session.pendingKinds.isEmpty {
            await adaptSendFormats(to: sdp, session: session)
            guard session === self.session else { return }
            do throws(PeerError) { try session.linkOutputs(announcingCaps: true) } catch {
                emit(.error("cannot link what we send: \(error)"))
            }
        }
        do throws(GStreamerError) {
            try await session.webrtc.setRemoteDescription(SessionDescription(kind: .offer, sdp: SDPRewrite.removingLinkLocalCandidates(sdp)))
            guard session === self.session else { return }
            noteRemoteDescription(sdp)
            // An answer made before our send pads have caps names no SSRC for their streams
            // (webrtcbin 1.22 writes `a=ssrc-group:FID 0 <rtx>` and no audio `a=ssrc`), and a far
            // end that routes by the signalled SSRCs drops them: Pion never raised its tracks for
            // 6–16 of 50 calls whose offer came before our first buffers. Bounded as the offer's wait.
            // Outputs linked just now announced their caps (`linkOutputs(announcingCaps:)`), so
            // this wait is for a source that has not sent anything yet, not for the next buffer.
            await waitForSendCaps(session)
            guard session === self.session else { return }
            let created = try await session.webrtc.createAnswer()
            let answer = SessionDescription(kind: .answer, sdp: completedAnswer(created.sdp, session))
            try await session.webrtc.setLocalDescription(answer)
            guard session === self.session else { return }
            negotiation.localMids = SDPInspection.mids(answer.sdp)
            negotiation.sdpKinds.merge(SDPInspection.ssrcKinds(answer.sdp)) { _, new in new }
            send(.answer(sdp: answer.sdp))
            emit(.sentAnswer(answer.sdp))
            for event in negotiation.unanswerable { emit(event) }
            negotiation.unanswerable = []
            if let problem = SDPInspection.rejectedMedia(offer: sdp, answer: answer.sdp) { emit(.error(problem)) }
            noteNegotiated(answer: answer.sdp)
        } catch {
            emit(.error("cannot answer the remote offer: \(error)"))
        }
    }

    /// Makes each output we send go out as the remote offer's format for our codec: the
    /// transceiver's codec preferences (what webrtcbin matches and answers with) and the
    /// payloader's payload type, then waits (bounded) until the payloaders announce it.
    /// A kind the offer cannot carry is left out, with an event saying why.
    private func adaptSendFormats(to sdp: String, session: PeerSession) async {
        guard let media else { return }
        let sections = SDPMediaSections.parse(sdp)
        var awaited: [MediaKind: Int] = [:]
        if configuration.media.parameters.lossRecovery.bandwidthAdaptation {
            let offered = sections.filter { !$0.isRejected }.lazy.compactMap(LossRecoverySetup.transportWideCCID(in:)).first
            do throws(MediaRuntimeError) { try media.setTransportWideCC(id: offered) } catch {
                emit(.error("transport-wide congestion feedback is off: \(error)"))
            }
        }
        for kind in session.pendingKinds {
            guard let output = media.graph.output(kind) else { continue }
            let section = sections.first { $0.kind == kind && !$0.isRejected }
            if kind == .video, videoPreference != nil {
                guard let format = await answerVideo(to: sections.first { $0.kind == .video }, session: session), let section else {
                    session.dropPendingOutput(kind)
                    continue
                }
                do throws(GStreamerError) {
                    try session.setCodecPreferences(kind, Caps(OfferedFormats.codecPreferences(for: format, kind: kind, in: section)))
                    negotiation.offeredFormats[kind] = format
                } catch {
                    session.dropPendingOutput(kind)
                    emit(.unmatchedMedia(kind: kind, reason: "cannot send video as the offer's \(format): \(error)"))
                }
                continue
            }
            guard let section, let format = OfferedFormats.choose(encodingName: output.encodingName, in: section) else {
                session.dropPendingOutput(kind)
                emit(.unmatchedMedia(kind: kind, reason: OfferedFormats.mismatch(encodingName: output.encodingName, kind: kind, in: section)))
                continue
            }
            do {
                try session.setCodecPreferences(kind, Caps(OfferedFormats.codecPreferences(for: format, kind: kind, in: section)))
                try media.setPayloadType(kind, to: format.payloadType)
                awaited[kind] = format.payloadType
                negotiation.offeredFormats[kind] = format
            } catch {
                session.dropPendingOutput(kind)
                emit(.unmatchedMedia(kind: kind, reason: "cannot send \(kind.rawValue) as the offer's \(format): \(error)"))
            }
        }
        let deadline = ContinuousClock.now + .seconds(2)
        while awaited.contains(where: { media.payloadType($0.key) != $0.value }), ContinuousClock.now < deadline {
            // Cancelled: the wait ends early and the loop or the guard after it decides.
            try? await Task.sleep(for: .milliseconds(10))
        }
        for (kind, payloadType) in awaited where media.payloadType(kind) != payloadType {
            emit(.error("the \(kind.rawValue) payloader did not switch to payload type \(payloadType) within 2 s"))
        }
    }

    /// Our answer as it goes out: the real certificate fingerprint, and H.264's
    /// `profile-level-id` where webrtcbin dropped it.
    private func completedAnswer(_ sdp: String, _ session: PeerSession) -> String {
        var answer = withOurFingerprint(sdp, session)
        for section in SDPMediaSections.parse(answer) where section.kind.map(negotiation.refusedKinds.contains) ?? false {
            answer = SDPRewrite.inactivating(answer, sectionIndex: section.index)
        }
        if let h264 = negotiation.offeredFormats[.video], h264.encodingName == "H264" {
            answer = SDPRewrite.addingProfileLevelID(answer, payloadType: h264.payloadType,
                                                     profileLevelID: h264.parameters["profile-level-id"] ?? "42e01f")
        }
        return answer
    }

    func withOurFingerprint(_ sdp: String, _ session: PeerSession) -> String {
        guard let certificate = session.certificate else { return sdp }
        return SDPRewrite.fingerprints(sdp, sha256: certificate.sha256Fingerprint)
    }

    private func noteNegotiated(answer: String) {
        negotiation.negotiated = NegotiatedCodec.from(answer: answer)
        let directions = session.map { expectedDirections(answer: answer, linked: $0.packetsByDirection) } ?? []
        liveness.directionWatch.expect(directions, now: .now)
        emit(.negotiated(negotiation.negotiated))
        emit(.directionsNegotiated(directions))
    }

    /// The directions an answer makes travel, seen from this end: an answer's direction is the
    /// answerer's own; we send only what we linked to webrtcbin.
    private func expectedDirections(answer: String, linked: [MediaDirection: UInt64]) -> Set<MediaDirection> {
        var directions: Set<MediaDirection> = []
        for section in SDPMediaSections.parse(answer) where !section.isRejected {
            guard let kind = section.kind else { continue }
            let answererSends = ["sendrecv", "sendonly"].contains(section.direction)
            let answererReceives = ["sendrecv", "recvonly"].contains(section.direction)
            let weSend = role == .answerer ? answererSends : answererReceives
            let weReceive = role == .answerer ? answererReceives : answererSends
            if weSend, linked[MediaDirection(kind: kind, sending: true)] != nil { directions.insert(MediaDirection(kind: kind, sending: true)) }
            if weReceive { directions.insert(MediaDirection(kind: kind, sending: false)) }
        }
        return directions
    }

    private func receiveAnswer(_ sdp: String) async {
        emit(.receivedAnswer(sdp))
        guard let session, SignalingState(session.webrtc) == .haveLocalOffer || negotiation.inProgress else {
            emit(.error("unexpected answer in signaling state \(session.map { SignalingState($0.webrtc).rawValue } ?? "closed"); ignored"))
            return
        }
        do throws(GStreamerError) {
            // What we apply lets us receive every codec we offered; what we act on is the answer.
            let receivable = SDPRewrite.removingLinkLocalCandidates(
                session.webrtc.localDescription.map { SDPRewrite.addingOfferedVideoFormats(sdp, offer: $0.sdp) } ?? sdp)
            try await session.webrtc.setRemoteDescription(SessionDescription(kind: .answer, sdp: receivable))
            noteRemoteDescription(sdp)
            await sendVideo(asAnsweredIn: sdp, session: session)
            noteNegotiated(answer: sdp)
        } catch {
            emit(.error("cannot apply the remote answer: \(error)"))
        }
        negotiation.inProgress = false
        if negotiation.pending {
            negotiation.pending = false
            if negotiation.offeredSignature.isOutdated(by: session.localSignature(channels: channels)) { await negotiate() }
        }
    }

    private func noteRemoteDescription(_ sdp: String) {
        negotiation.remoteDescriptionSet = true
        negotiation.sdpKinds.merge(SDPInspection.ssrcKinds(sdp)) { _, new in new }
        negotiation.remoteICEUfrag = SDPInspection.iceUfrag(sdp)
        let queued = negotiation.queuedCandidates
        negotiation.queuedCandidates = []
        for candidate in queued { addRemoteCandidate(mlineIndex: candidate.mlineIndex, candidate: candidate.candidate) }
    }

    private func addRemoteCandidate(mlineIndex: Int, candidate: String) {
        guard !candidate.isEmpty else { return } // end-of-candidates: nothing to add in 1.22
        guard negotiation.remoteDescriptionSet, let session else {
            negotiation.queuedCandidates.append((mlineIndex, candidate))
            return
        }
        guard mlineIndex >= 0 else {
            emit(.error("remote candidate with invalid m-line index \(mlineIndex) ignored"))
            return
        }
        do throws(GStreamerError) {
            try session.addRemoteCandidate(mlineIndex: UInt(mlineIndex), candidate: candidate)
        } catch {
            emit(.error("remote candidate rejected: \(error)"))
        }
    }
}
