import GStreamer
import Testing

@Suite struct PropertyTests {
    init() { _ = TestRuntime.ready }

    @Test func typedPropertiesRoundTrip() throws {
        let encoder = try Element(factory: "vp8enc", name: "enc")
        try encoder.set("target-bitrate", 800_000)
        try encoder.set("end-usage", "cbr")
        try encoder.set("deadline", Int64(1))
        #expect(try encoder.get("target-bitrate").intValue == 800_000)
        #expect(try encoder.get("end-usage").stringValue == "cbr")
        #expect(try encoder.get("deadline").intValue == 1)
        let x264 = try Element(factory: "x264enc")
        try x264.set("bitrate", 1500)
        try x264.set("tune", "zerolatency")
        #expect(try x264.get("bitrate").uintValue == 1500)
        guard case .flags(let tune) = try x264.get("tune") else { Issue.record("tune is not flags"); return }
        #expect(tune.nicks == ["zerolatency"])
        let filter = try Element(factory: "capsfilter")
        try filter.set("caps", try Caps("video/x-raw,width=2"))
        #expect(try filter.get("caps").capsValue?.structures.first?.int("width") == 2)
        try filter.set("caps", "audio/x-raw")
        #expect(try filter.get("caps").capsValue?.mediaType == "audio/x-raw")
    }

    @Test func unknownPropertyThrowsNamingIt() throws {
        let encoder = try Element(factory: "vp8enc", name: "enc")
        #expect {
            try encoder.set("no-such-property", 1)
        } throws: { error in
            guard case GStreamerError.unknownProperty(let object, let property) = error else { return false }
            return property == "no-such-property" && object.contains("enc")
        }
    }

    @Test func wrongTypeAndRangeAndNickThrow() throws {
        let encoder = try Element(factory: "x264enc")
        #expect {
            try encoder.set("bitrate", "fast")
        } throws: { error in
            if case GStreamerError.wrongPropertyType(_, "bitrate", _, _) = error { true } else { false }
        }
        #expect {
            try encoder.set("bitrate", -5)
        } throws: { error in
            if case GStreamerError.valueOutOfRange(_, "bitrate", _, _) = error { true } else { false }
        }
        #expect {
            try encoder.set("speed-preset", "warp-speed")
        } throws: { error in
            guard case GStreamerError.unknownEnumValue(_, "speed-preset", _, let allowed) = error else { return false }
            return allowed.contains("ultrafast")
        }
        let source = try Element(factory: "videotestsrc")
        #expect {
            try source.set("is-live", 1)
        } throws: { error in
            if case GStreamerError.wrongPropertyType(_, "is-live", "a boolean", _) = error { true } else { false }
        }
    }

    @Test func readOnlyPropertyIsRefused() throws {
        let sink = try Element(factory: "fakesink")
        #expect {
            try sink.set("last-sample", "x")
        } throws: { error in
            if case GStreamerError.propertyNotWritable(_, "last-sample") = error { true } else { false }
        }
    }

    @Test func stringFormSetterParsesLikeGstLaunch() throws {
        let encoder = try Element(factory: "vp8enc")
        try encoder.set("end-usage", fromString: "cq")
        #expect(try encoder.get("end-usage").stringValue == "cq")
        #expect(throws: GStreamerError.self) { try encoder.set("cpu-used", fromString: "lots") }
    }
}
