import ECV
import ECVAgent
import ECVProtocol
import ECVService
import ECVTestSupport
import EnQualify
import Foundation
import Testing

/// `setHandicappedStatus` updates the back-office session, and the service then routes that
/// customer before one who has waited longer.
@Suite(.serialized) struct AccessibilityPriorityTests {
    @Test func aHearingImpairedCustomerIsOfferedFirst() async throws {
        let backend = try await verificationBackend()
        let first = RecordingDelegate()
        let earlier = try await initializedCall(backend, delegate: first, reference: "REF-EARLY")
        try earlier.startVideoCall()
        try await eventually(.seconds(10), "the first customer queued") { backend.service.acd.snapshot().interactions.count == 1 }

        let second = RecordingDelegate()
        let impaired = try await initializedCall(backend, delegate: second, reference: "REF-HEARING")
        impaired.setHandicappedStatus(hearing: true, visually: false)
        try impaired.startVideoCall()
        try await eventually(.seconds(10), "the second customer queued") { backend.service.acd.snapshot().interactions.count == 2 }

        let queued = backend.service.acd.snapshot().interactions
        let early = try #require(queued.first { $0.attributes["reference"] == "REF-EARLY" })
        let hearing = try #require(queued.first { $0.attributes["reference"] == "REF-HEARING" })
        #expect(early.priority == 0)
        #expect(hearing.priority == backend.service.acd.configuration.accessibilityPriority)
        #expect(hearing.acdAttributes[ACDAttributeKey.hearingImpaired] == "true")
        #expect(backend.service.acd.queueInfo(rtcId: hearing.rtcId).position == 1)

        // An agent who only looks at offers: the impaired customer, who came second, is offered first.
        let bot = try await backend.agent(name: "Verifier") { $0.joinsRooms = false }
        try await eventually(.seconds(10), "an offer") { bot.calls.count == 1 }
        #expect(bot.calls.first?.rtcId == hearing.rtcId)
        #expect(second.trail.contains("sessionUpdateFailed") == false)

        try await finish(earlier)
        try await finish(impaired)
        await bot.logout()
        await backend.close()
    }

    @Test func settingTheStatusWhileWaitingMovesTheCallUp() async throws {
        let backend = try await verificationBackend()
        let first = try await initializedCall(backend, delegate: RecordingDelegate(), reference: "REF-EARLY")
        try first.startVideoCall()
        try await eventually(.seconds(10), "the first customer queued") { backend.service.acd.snapshot().interactions.count == 1 }
        let delegate = RecordingDelegate()
        let second = try await initializedCall(backend, delegate: delegate, reference: "REF-LATE")
        try second.startVideoCall()
        try await eventually(.seconds(10), "the second customer queued") { backend.service.acd.snapshot().interactions.count == 2 }
        let late = try #require(backend.service.acd.snapshot().interactions.first { $0.attributes["reference"] == "REF-LATE" })
        #expect(backend.service.acd.queueInfo(rtcId: late.rtcId).position == 2)

        second.setHandicappedStatus(hearing: false, visually: true)
        try await eventually(.seconds(10), "the waiting call moved up") { backend.service.acd.queueInfo(rtcId: late.rtcId).position == 1 }
        let moved = try #require(backend.service.acd.snapshot().interactions.first { $0.rtcId == late.rtcId })
        #expect(moved.priority == backend.service.acd.configuration.accessibilityPriority)
        #expect(moved.acdAttributes[ACDAttributeKey.visuallyImpaired] == "true")

        let bot = try await backend.agent(name: "Verifier") { $0.joinsRooms = false }
        try await eventually(.seconds(10), "an offer") { bot.calls.count == 1 }
        #expect(bot.calls.first?.rtcId == late.rtcId)
        #expect(!delegate.trail.contains("sessionUpdateFailed"))
        try await finish(first)
        try await finish(second)
        await bot.logout()
        await backend.close()
    }

    @Test func anImpairedCustomerGoesToAnAgentWhoServesAccessibilityWhenThereIsOne() async throws {
        let backend = try await verificationBackend()
        // Alice has been free longest; Bob serves accessibility first.
        let alice = try await backend.agent(name: "Alice") { $0.joinsRooms = false }
        let bob = try await backend.agent(name: "Bob") { configuration in
            configuration.joinsRooms = false
            configuration.servesAccessibility = true
        }
        let impaired = try await initializedCall(backend, delegate: RecordingDelegate(), reference: "REF-HEARING")
        impaired.setHandicappedStatus(hearing: true, visually: false)
        try impaired.startVideoCall()
        try await eventually(.seconds(10), "the impaired customer offered") { bob.calls.count + alice.calls.count == 1 }
        #expect(bob.calls.count == 1, "offered to Alice instead")
        // Anyone else goes to the longest-free agent, as before.
        let plain = try await initializedCall(backend, delegate: RecordingDelegate(), reference: "REF-PLAIN")
        try plain.startVideoCall()
        try await eventually(.seconds(10), "the other customer offered") { alice.calls.count == 1 }
        try await finish(impaired)
        try await finish(plain)
        await alice.logout()
        await bob.logout()
        await backend.close()
    }

    @Test func theSessionDecidesTheFlagsNotTheDial() async throws {
        // A customer whose session says nothing cannot claim priority by naming its session in a
        // hand-made DialEx: the back office puts the session's flags in.
        let backend = try await verificationBackend()
        let delegate = RecordingDelegate()
        let call = try await initializedCall(backend, delegate: delegate, reference: "REF-PLAIN")
        let sessionId = try #require(call.sessionId)
        let sdk = try backend.sdk()
        let raw = try #require(await sdk.createVideoCall())
        await raw.start(dialCallParameters: DialCallParameters(callerName: "Claimant", acdAttributes: [
            VerificationAPI.sessionAttribute: sessionId, ACDAttributeKey.hearingImpaired: "true"]))
        let dialed = try #require(backend.service.acd.snapshot().interactions.first { $0.rtcId == raw.rtcId })
        #expect(dialed.priority == 0)
        #expect(dialed.acdAttributes[ACDAttributeKey.hearingImpaired] == "false")
        raw.hangup()
        try await eventually(.seconds(10), "the hand-made call ended") { raw.isEnded }
        try await finish(call)
        await backend.close()
    }
}
