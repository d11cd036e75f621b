import MediaPipeline
import Testing
@testable import WebRTC

/// Choosing the remote offer's formats for what we send, on offers shaped like the ones the
/// foreign stacks send (payload numbers, fmtp and rtcp-fb as Chromium 156 and aiortc 1.16 write them).
@Suite struct OfferedFormatsTests {
    static let chromiumOffer = """
        v=0\r
        o=- 4611731400430051336 2 IN IP4 127.0.0.1\r
        s=-\r
        t=0 0\r
        a=group:BUNDLE 0 1 2\r
        m=audio 9 UDP/TLS/RTP/SAVPF 111 63 9 0 8 13 110 126\r
        a=mid:0\r
        a=extmap:1 urn:ietf:params:rtp-hdrext:ssrc-audio-level\r
        a=extmap:3 http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01\r
        a=rtpmap:111 opus/48000/2\r
        a=rtcp-fb:111 transport-cc\r
        a=fmtp:111 minptime=10;useinbandfec=1\r
        a=rtpmap:63 red/48000/2\r
        a=rtpmap:9 G722/8000\r
        a=rtpmap:0 PCMU/8000\r
        m=video 9 UDP/TLS/RTP/SAVPF 96 97 98 99 100 101 102 103 104 105 106 107 108 109 112 113\r
        a=mid:1\r
        a=extmap:3 http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01\r
        a=rtpmap:96 VP8/90000\r
        a=rtcp-fb:96 goog-remb\r
        a=rtcp-fb:96 transport-cc\r
        a=rtcp-fb:96 ccm fir\r
        a=rtcp-fb:96 nack\r
        a=rtcp-fb:96 nack pli\r
        a=rtpmap:97 rtx/90000\r
        a=fmtp:97 apt=96\r
        a=rtpmap:98 VP9/90000\r
        a=fmtp:98 profile-id=0\r
        a=rtpmap:100 VP9/90000\r
        a=fmtp:100 profile-id=2\r
        a=rtpmap:102 H264/90000\r
        a=fmtp:102 level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=42001f\r
        a=rtpmap:104 H264/90000\r
        a=fmtp:104 level-asymmetry-allowed=1;packetization-mode=0;profile-level-id=42001f\r
        a=rtpmap:106 H264/90000\r
        a=fmtp:106 level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=42e01f\r
        a=rtpmap:108 H264/90000\r
        a=fmtp:108 level-asymmetry-allowed=1;packetization-mode=0;profile-level-id=42e01f\r
        a=rtpmap:112 H264/90000\r
        a=fmtp:112 level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=4d001f\r
        m=application 9 UDP/DTLS/SCTP webrtc-datachannel\r
        a=mid:2\r

        """

    static let aiortcOffer = """
        v=0\r
        o=- 3966215735 3966215735 IN IP4 0.0.0.0\r
        s=-\r
        t=0 0\r
        a=group:BUNDLE 0 1\r
        m=video 9 UDP/TLS/RTP/SAVPF 97 98 99 100 101 102\r
        a=mid:0\r
        a=rtpmap:97 VP8/90000\r
        a=rtcp-fb:97 nack\r
        a=rtcp-fb:97 nack pli\r
        a=rtcp-fb:97 goog-remb\r
        a=rtpmap:98 rtx/90000\r
        a=fmtp:98 apt=97\r
        a=rtpmap:99 H264/90000\r
        a=fmtp:99 level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=42001f\r
        a=rtpmap:101 H264/90000\r
        a=fmtp:101 level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=42e01f\r
        m=audio 9 UDP/TLS/RTP/SAVPF 96 0 8\r
        a=mid:1\r
        a=rtpmap:96 opus/48000/2\r
        a=rtpmap:0 PCMU/8000\r

        """

    func section(_ sdp: String, _ kind: MediaKind) throws -> SDPMediaSection {
        try #require(SDPMediaSections.parse(sdp).first { $0.kind == kind })
    }

    /// The format an end that accepts only `codec` sends the offer's video as.
    func pick(_ codec: String, _ section: SDPMediaSection) -> SDPFormat? {
        OfferedFormats.chooseVideo(in: section, from: VideoCodecPreference(codecs: [VideoCodec(rawValue: codec)!], restricted: true))?.1
    }

    /// The offer's order decides (the offerer's preference), not ours: Chromium lists VP8 first.
    @Test func theOffersFirstCommonCodecIsTaken() throws {
        let video = try section(Self.chromiumOffer, .video)
        let ours = VideoCodecPreference(codecs: [.h264, .vp9, .vp8], restricted: false)
        #expect(OfferedFormats.chooseVideo(in: video, from: ours)?.0 == .vp8)
        let noVP8 = VideoCodecPreference(codecs: [.h264, .vp9], restricted: true)
        #expect(OfferedFormats.chooseVideo(in: video, from: noVP8)?.0 == .vp9)
        let aiortc = try section(Self.aiortcOffer, .video)
        #expect(OfferedFormats.chooseVideo(in: aiortc, from: VideoCodecPreference(codecs: [.vp9], restricted: true)) == nil)
        #expect(OfferedFormats.codecNames(in: aiortc) == ["VP8", "H264"])
    }

    /// profile-level-id by meaning: constrained baseline in three spellings, and what is not ours.
    @Test func h264ProfilesAreReadByMeaning() {
        for id in ["42e01f", "42c01f", "4d801f", "42E034", "58c01f"] { #expect(H264Profile(profileLevelID: id) == .constrainedBaseline, "\(id)") }
        #expect(H264Profile(profileLevelID: "42001f") == .baseline)
        #expect(H264Profile(profileLevelID: "4d001f") == .main && H264Profile(profileLevelID: "4d401f") == .main)
        #expect(H264Profile(profileLevelID: "640c1f") == .constrainedHigh)
        #expect(H264Profile(profileLevelID: "64001f") == .high)
        #expect(H264Profile(profileLevelID: "580029")?.carriesOurStream == false)
        for bad in ["", "42e0", "zz001f", "6e001f", "42e01f00"] { #expect(H264Profile(profileLevelID: bad) == nil, "\(bad)") }
    }

    /// webrtcbin offers RTX for a transceiver's first codec only; each other codec gets its own.
    @Test func everyOfferedVideoCodecGetsItsRTX() throws {
        let offer = "v=0\r\nm=video 9 UDP/TLS/RTP/SAVPF 96 98 100 97\r\na=rtpmap:96 VP8/90000\r\na=rtpmap:98 VP9/90000\r\n"
            + "a=rtpmap:100 H264/90000\r\na=rtpmap:97 rtx/90000\r\na=fmtp:97 apt=96\r\nm=audio 0 UDP/TLS/RTP/SAVPF 111\r\na=rtpmap:111 OPUS/48000/2\r\n"
        let rewritten = SDPRewrite.addingRTXForEveryVideoCodec(offer)
        let video = try section(rewritten, .video)
        let rtx = video.formats.filter { $0.encodingName == "RTX" }.map { "\($0.payloadType)->\($0.parameters["apt"] ?? "")" }
        #expect(rtx == ["97->96", "99->98", "101->100"])
        #expect(try section(rewritten, .audio).formats.map(\.payloadType) == [111])
        #expect(SDPRewrite.addingRTXForEveryVideoCodec(rewritten) == rewritten, "nothing to add twice")
    }

    /// A browser answering one codec may still send the offer's first: what we apply keeps every
    /// offered video format receivable, after the answer's own.
    @Test func theAnswerWeApplyKeepsEveryOfferedVideoFormat() throws {
        let offer = "v=0\r\nm=video 9 UDP/TLS/RTP/SAVPF 96 98 97 99\r\na=rtpmap:96 VP8/90000\r\na=rtcp-fb:96 nack\r\na=rtpmap:98 VP9/90000\r\n"
            + "a=fmtp:98 profile-id=0\r\na=rtpmap:97 rtx/90000\r\na=fmtp:97 apt=96\r\na=rtpmap:99 rtx/90000\r\na=fmtp:99 apt=98\r\n"
            + "m=audio 0 UDP/TLS/RTP/SAVPF 111\r\na=rtpmap:111 OPUS/48000/2\r\n"
        let answer = "v=0\r\nm=video 9 UDP/TLS/RTP/SAVPF 98 99\r\na=rtpmap:98 VP9/90000\r\na=rtpmap:99 rtx/90000\r\na=fmtp:99 apt=98\r\n"
            + "a=sendrecv\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\na=rtpmap:111 OPUS/48000/2\r\n"
        let applied = try section(SDPRewrite.addingOfferedVideoFormats(answer, offer: offer), .video)
        #expect(applied.formats.map(\.description) == ["VP9/98", "RTX/99", "VP8/96", "RTX/97"])
        #expect(applied.formats.first { $0.payloadType == 96 }?.feedback == ["nack"])
        #expect(NegotiatedCodec.from(answer: SDPRewrite.addingOfferedVideoFormats(answer, offer: offer))[.video]?.encodingName == "VP9")
        #expect(SDPRewrite.addingOfferedVideoFormats(offer, offer: offer) == offer, "an answer with every format is kept")
    }

    /// A refused section stays (and keeps its bundle) but carries nothing either way.
    @Test func aRefusedSectionIsAnsweredInactive() throws {
        let answer = "v=0\r\nm=video 9 UDP/TLS/RTP/SAVPF 96\r\na=rtpmap:96 H264/90000\r\na=recvonly\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\na=sendrecv\r\n"
        let rewritten = SDPRewrite.inactivating(answer, sectionIndex: 0)
        #expect(try section(rewritten, .video).direction == "inactive")
        #expect(try section(rewritten, .audio).direction == "sendrecv")
        #expect(!rewritten.contains("recvonly"))
    }

    @Test func chromiumsNumbersAreUsedForEachOfOurCodecs() throws {
        let video = try section(Self.chromiumOffer, .video), audio = try section(Self.chromiumOffer, .audio)
        #expect(pick("VP8", video)?.payloadType == 96)
        #expect(pick("VP9", video)?.payloadType == 98)
        // Constrained baseline with packetization-mode 1, not the first H264 entry.
        #expect(pick("H264", video)?.payloadType == 106)
        #expect(OfferedFormats.choose(encodingName: "OPUS", in: audio)?.payloadType == 111)
        #expect(video.formats.first { $0.payloadType == 96 }?.feedback == ["goog-remb", "transport-cc", "ccm fir", "nack", "nack pli"])
    }

    @Test func aiortcsNumbersAreUsedForEachOfOurCodecs() throws {
        let video = try section(Self.aiortcOffer, .video), audio = try section(Self.aiortcOffer, .audio)
        #expect(pick("VP8", video)?.payloadType == 97)
        #expect(pick("H264", video)?.payloadType == 101)
        #expect(OfferedFormats.choose(encodingName: "OPUS", in: audio)?.payloadType == 96)
        #expect(pick("VP9", video) == nil)
    }

    @Test func codecPreferencesCarryThePayloadTypeModeAndTransportWideCC() throws {
        let video = try section(Self.chromiumOffer, .video)
        let h264 = try #require(pick("H264", video))
        let caps = OfferedFormats.codecPreferences(for: h264, kind: .video, in: video)
        #expect(caps == "application/x-rtp,media=video,encoding-name=H264,clock-rate=90000,payload=106,packetization-mode=(string)1,extmap-3=(string)\(OfferedFormats.transportWideCCURI)")
        let aiortc = try section(Self.aiortcOffer, .video)
        let vp8 = try #require(pick("VP8", aiortc))
        #expect(OfferedFormats.codecPreferences(for: vp8, kind: .video, in: aiortc) == "application/x-rtp,media=video,encoding-name=VP8,clock-rate=90000,payload=97")
    }

    @Test func aMismatchNamesOurCodecAndWhatWasOffered() throws {
        let video = try section(Self.aiortcOffer, .video)
        let message = OfferedFormats.mismatch(encodingName: "VP9", kind: .video, in: video)
        #expect(message.contains("VP9"))
        #expect(message.contains("VP8/97"))
        #expect(message.contains("H264/101"))
        #expect(OfferedFormats.mismatch(encodingName: "VP8", kind: .video, in: nil).contains("no video section"))
    }

    @Test func bundleOnlySectionsAreNotRejectedButPortZeroOnesAre() {
        let sdp = "v=0\r\nm=video 9 RTP/SAVPF 96\r\na=rtpmap:96 VP8/90000\r\nm=audio 0 RTP/SAVPF 111\r\na=bundle-only\r\na=rtpmap:111 OPUS/48000/2\r\nm=video 0 RTP/SAVPF 96\r\n"
        let sections = SDPMediaSections.parse(sdp)
        #expect(sections.map(\.isRejected) == [false, false, true])
        #expect(sections[1].formats.first?.encodingName == "OPUS")
    }

    @Test func hostileDescriptionsDescribeNothingUsable() {
        #expect(SDPMediaSections.parse(String(repeating: "a=x\r\n", count: 60_000)).isEmpty)
        let junk = "m=video 9 RTP/SAVPF 96 999 -4 abc\r\na=rtpmap:96 VP8/0\r\na=rtpmap:999 VP8/90000\r\na=fmtp:96 =;;=x;\r\na=extmap:0 x\r\na=extmap:70000 y\r\na=rtcp-fb:*\r\n"
        let sections = SDPMediaSections.parse(junk)
        #expect(sections.count == 1)
        #expect(sections[0].formats.map(\.payloadType) == [96])
        #expect(sections[0].formats[0].clockRate == 0)
        #expect(sections[0].extensions.isEmpty)
        #expect(OfferedFormats.choose(encodingName: "VP8", in: sections[0]) == nil)
        let many = "m=video 9 RTP/SAVPF 96\r\n" + String(repeating: "m=audio 9 RTP/SAVPF 111\r\n", count: 500)
        #expect(SDPMediaSections.parse(many).count == SDPMediaSections.maxSections)
    }

    @Test func ourFingerprintReplacesWebrtcbinsOnEveryLineKeepingCRLF() {
        let sdp = "v=0\r\nm=video 9 X 96\r\na=fingerprint:sha-256 AA:BB\r\nm=audio 9 X 111\r\na=fingerprint:sha-256 AA:BB\r\n"
        let rewritten = SDPRewrite.fingerprints(sdp, sha256: "01:02")
        #expect(rewritten == "v=0\r\nm=video 9 X 96\r\na=fingerprint:sha-256 01:02\r\nm=audio 9 X 111\r\na=fingerprint:sha-256 01:02\r\n")
    }

    @Test func profileLevelIDIsAddedOnlyWhereMissing() {
        let sdp = "v=0\r\na=fmtp:106 packetization-mode=1;level-asymmetry-allowed=1\r\na=fmtp:107 apt=106\r\n"
        let added = SDPRewrite.addingProfileLevelID(sdp, payloadType: 106, profileLevelID: "42e01f")
        #expect(added.contains("a=fmtp:106 packetization-mode=1;level-asymmetry-allowed=1;profile-level-id=42e01f\r\n"))
        #expect(added.contains("a=fmtp:107 apt=106\r\n"))
        #expect(SDPRewrite.addingProfileLevelID(added, payloadType: 106, profileLevelID: "42e01f") == added)
        #expect(SDPRewrite.addingProfileLevelID(sdp, payloadType: 106, profileLevelID: "42e01f;x=1") == sdp)
    }

    /// Glare: both sides compare the two offers' session ids; exactly one may win.
    @Test func glareHasExactlyOneWinnerForDifferentSessionIDs() {
        for (a, b) in [("4611731400430051336", "3966215735"), ("7", "007"), ("+7", "7"), ("10", "9"), ("abc", "12"), ("x", "y")] {
            #expect(SDPInspection.sessionIDOrder(a, b) != SDPInspection.sessionIDOrder(b, a), "\(a) vs \(b)")
        }
        #expect(SDPInspection.sessionIDOrder("10", "9"))
        #expect(!SDPInspection.sessionIDOrder("5", "5"))
    }

    @Test func theAnswersCodecsAreWhatWasNegotiated() {
        let answer = "v=0\r\nm=audio 9 X 111\r\na=rtpmap:111 OPUS/48000/2\r\nm=video 9 X 106 107\r\na=rtpmap:106 H264/90000\r\na=fmtp:106 packetization-mode=1\r\na=rtpmap:107 rtx/90000\r\nm=video 0 X 96\r\n"
        let codecs = NegotiatedCodec.from(answer: answer)
        #expect(codecs[.audio]?.description == "OPUS/111")
        #expect(codecs[.video]?.description == "H264/106")
        #expect(codecs[.video]?.parameters["packetization-mode"] == "1")
    }
}
