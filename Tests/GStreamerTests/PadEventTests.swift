import GStreamer
import Testing

@Suite struct PadEventTests {
    init() { _ = TestRuntime.ready }

    /// A branch linked behind a tee of a running stream has no caps until something crosses
    /// the tee; a custom event sent into the tee's input carries them to it at once, with no new
    /// buffer (what an answerer's link to webrtcbin relies on).
    @Test func customEventCarriesTheCapsToANewlyLinkedBranch() async throws {
        let pipeline = Pipeline()
        let source = try AppSource(caps: try Caps("application/x-ecvkit-test,rate=(int)8"), isLive: true)
        let tee = try Element(factory: "tee")
        try tee.set(TeeProperty.allowNotLinked, true)
        let first = try Element(factory: "fakesink")
        try pipeline.add([source, tee, first])
        try source.link(to: tee)
        try tee.link(to: first)
        pipeline.requestState(.playing)
        try source.push([1, 2, 3], pts: 0, duration: nil)
        let teeInput = try #require(tee.staticPad("sink"))
        try await waitUntil("the first buffer's caps at the tee") { teeInput.currentCaps != nil }

        let late = try Element(factory: "fakesink")
        try late.set(PropertyKey<Bool>("async"), false)
        try pipeline.add(late)
        _ = late.syncStateWithParent()
        let lateInput = try #require(late.staticPad("sink"))
        try tee.requestPad("src_%u").link(to: lateInput)
        #expect(lateInput.currentCaps == nil, "a new branch has no caps before anything crossed the tee")

        #expect(teeInput.sendCustomDownstreamEvent(named: "ecvkit-test-announcement"))
        #expect(lateInput.currentCaps?.description.hasPrefix("application/x-ecvkit-test") == true)
        // Only a sink pad takes events sent into it.
        #expect(!(try #require(source.staticPad("src"))).sendCustomDownstreamEvent(named: "ecvkit-test-announcement"))
        pipeline.stop()
    }
}
