import ECV
@testable import ECVAgent
import ECVTestSupport
import Foundation
import NetworkTestSupport
import Testing

extension InteropTests {
    /// Chromium, the agent's media end, runs inside a network lab (its own namespace, joined by a
    /// veth pair); the reference service listens on the lab's host address and the ECVKit caller
    /// stays here, so every media packet of the call crosses the impaired path. 5 % random loss
    /// both ways for six seconds, then a three-second blackhole: libwebrtc and ECVKit must ask
    /// each other for resends (NACK, both directions) and keep the picture moving, and the call
    /// must come back by itself when the path does. After the blackhole Chromium's estimate can be
    /// as low as 70–90 kbit/s, so it paces each frame out over 100–200 ms: before ECVKit's jitter
    /// buffers stopped predicting packets (`rtx-next-seqnum`), about one VP8 run in twelve under
    /// load never showed the browser's video again. A failure prints the browser's sender stats and
    /// when ECVKit's key-frame requests reached it.
    @Suite("Interop: Chromium across a lossy path", .serialized)
    struct LossyPathTests {
        static let lossSeconds = 6.0
        static let blackholeSeconds = 3.0

        static var unavailable: String? {
            guard InteropEnvironment.hasChromium else { return InteropEnvironment.missingChromium }
            return NetworkLab.unavailableReason
        }

        @Test(.enabled(if: unavailable == nil, Comment(rawValue: unavailable ?? "")), arguments: ["VP8", "H264"])
        func chromiumAgentAcrossLossAndABlackhole(codec: String) async throws {
            let lab = try NetworkLab()
            defer { lab.close() }
            let backend = try await Backend.start(host: lab.hostAddress)
            let agent = try await backend.agent(configure: { $0.joinsRooms = false })
            let sdk = try backend.sdk()
            let log = EventLog(sdk)
            let call = try #require(await sdk.createVideoCall())
            await call.start(dialCallParameters: DialCallParameters(callerName: "Jane"))
            let room = call.rtcId
            _ = try await log.wait(for: .AgentConnected, room)
            let connection = try #require(call.connect(parameters: ConnectParameters(
                videoWidth: 320, videoHeight: 240, videoCodec: codec, noAudioProcessing: true)))
            let renderer = CountingRenderer()
            connection.remoteVideoRenderer = renderer
            await connection.startRoom()
            _ = try await log.wait(for: .JoinedRoom, room)

            let browser = try Self.browserInLab(lab, base: backend.url, room: room, token: agent.sessionToken, codec: codec)
            do {
                try await Self.impairAndCheck(lab: lab, browser: browser, renderer: renderer, log: log, room: room, codec: codec)
            } catch {
                if let summary = await browser.interruptedSummary(peer: .chromium) {
                    print("lossy path \(codec): the browser sent \(summary.framesSent) frames, decoded \(summary.framesDecoded)\n\(summary.evidence)\n"
                          + "ECVKit's key-frame requests reached the browser at (wall clock): "
                          + summary.keyframeRequests.map { String(format: "%.2f", $0) }.joined(separator: " "))
                }
                print(browser.transcript)
                await browser.finish()
                throw error
            }
            call.hangup()
            _ = try? await log.wait(for: .CallEnded, room)
            await browser.finish()
            await agent.logout()
            await backend.close()
        }

        private static func impairAndCheck(lab: NetworkLab, browser: ForeignPeer, renderer: CountingRenderer, log: EventLog,
                                           room: String, codec: String) async throws {
            _ = try await log.wait(for: .WebRtcConnected, room, timeout: .seconds(30))
            try await browser.waitForProgress("channel-open", timeout: .seconds(30))
            try await eventually(.seconds(20), "the browser's video at the ECVKit caller") { renderer.count >= 15 }

            try lab.setLoss(percent: 5)
            let beforeLoss = renderer.count
            // The lossy stretch is paced by the clock: it is the length of the impairment, not a wait.
            try await Task.sleep(for: .seconds(lossSeconds))
            let duringLoss = renderer.count - beforeLoss
            try lab.setLoss(percent: 0)

            try lab.setBlackhole(true)
            try await Task.sleep(for: .seconds(blackholeSeconds))
            let atLift = renderer.count
            try lab.setBlackhole(false)
            // For a failure report, on the clock the browser's key-frame request times are on.
            print(String(format: "lossy path \(codec): the blackhole lifted at %.2f (wall clock)", Date().timeIntervalSince1970))
            try await eventually(.seconds(10), "the browser's video again after the blackhole (\(atLift) before)") {
                renderer.count >= atLift + 30
            }

            let summary = try await browser.summary(peer: .chromium, timeout: .seconds(40))
            let browserFps = Double(summary.framesSent) / max(summary.mediaSeconds, 1)
            print("lossy path \(codec): ECVKit rendered \(duringLoss) frames in \(lossSeconds) s of 5 % loss "
                  + "(browser sent \(String(format: "%.1f", browserFps)) fps); browser decoded \(summary.framesDecoded) in "
                  + "\(String(format: "%.1f", summary.mediaSeconds)) s; NACKs browser→ECVKit \(summary.nackSent), ECVKit→browser \(summary.nackReceived); "
                  + "PLI browser sent/received \(summary.pliSent)/\(summary.pliReceived); video sender: \(summary.sender.joined(separator: ", "))")
            #expect(Double(duringLoss) >= 0.75 * browserFps * lossSeconds,
                    "ECVKit kept \(duringLoss) of ~\(Int(browserFps * lossSeconds)) frames under 5 % loss")
            // ECVKit sends 30 fps; the blackhole and a second around it carry nothing.
            let flowingSeconds = summary.mediaSeconds - blackholeSeconds - 1
            #expect(Double(summary.framesDecoded) >= 0.75 * 30 * flowingSeconds,
                    "the browser decoded \(summary.framesDecoded) frames in ~\(Int(flowingSeconds)) s with media flowing")
            #expect(summary.nackSent > 0, "the browser asked ECVKit to resend")
            // Chromium protects its video with RED/ULPFEC as well, so a run whose few lost packets
            // were all repaired from parity needs no resend: ECVKit must have asked, or kept
            // (nearly) every frame without asking.
            #expect(summary.nackReceived > 0 || Double(duringLoss) >= 0.97 * browserFps * lossSeconds,
                    "ECVKit asked the browser to resend (\(summary.nackReceived)) or kept \(duringLoss) frames without")
            #expect(log.count(.CallEnded) == 0, "the call survived the blackhole")
        }

        /// The interop page's Chromium, started inside the lab (`ip netns exec`), as the agent side.
        static func browserInLab(_ lab: NetworkLab, base: String, room: String, token: String?, codec: String) throws -> ForeignPeer {
            var page = URLComponents(string: base + "/r/" + room)
            page?.queryItems = [URLQueryItem(name: "role", value: "agent"), URLQueryItem(name: "codec", value: codec),
                                URLQueryItem(name: "label", value: "textchannel"), URLQueryItem(name: "watch", value: "keyframes")]
                + (token.map { [URLQueryItem(name: "token", value: $0)] } ?? [])
            guard let url = page?.string else { throw TestFailure("no page URL from \(base) and room \(room)") }
            let duration = lossSeconds + blackholeSeconds + 8
            return try ForeignPeer(executable: URL(fileURLWithPath: "/usr/sbin/ip"),
                                   arguments: ["netns", "exec", lab.namespace, InteropEnvironment.python, "-u",
                                               InteropEnvironment.peers.appendingPathComponent("chromium_peer.py").path,
                                               "--page", url, "--duration", String(duration)],
                                   name: "chromium in \(lab.namespace)")
        }
    }
}
