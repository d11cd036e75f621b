import Foundation
import ECVProtocol
import Testing

@Suite("Paths and queue figures")
struct ECVAPITests {
    @Test func appRTCPathsPercentEncodeTheirSegments() {
        #expect(ECVAPI.joinPath(room: "rtc-2") == "/join/rtc-2")
        #expect(ECVAPI.messagePath(room: "rtc-2", client: "123") == "/message/rtc-2/123")
        #expect(ECVAPI.leavePath(room: "a b", client: "1/2") == "/leave/a%20b/1%2F2")
        #expect(ECVAPI.browserRoomPath(room: "rtc-2") == "/r/rtc-2")
        #expect(ECVAPI.colliderPostPath(room: "r", client: "c") == "/r/c")
    }

    @Test func urlsJoinWithOrWithoutATrailingSlash() {
        #expect(ECVAPI.url(base: "http://127.0.0.1:8080/", path: ECVAPI.dialEx) == "http://127.0.0.1:8080/api/DialEx")
        #expect(ECVAPI.url(base: "http://h", path: ECVAPI.browserRoomPath(room: "x")) == "http://h/r/x")
        #expect(ECVAPI.webSocketBase("https://h:1") == "wss://h:1")
        #expect(ECVAPI.webSocketBase("http://h:1") == "ws://h:1")
    }

    @Test func pollingEndpointsAreRtcIdPrefixes() {
        #expect(ECVAPI.appendingRtcId("rtc-1", to: "http://h/api/WaitForRoomInterval?rtcId=")
            == "http://h/api/WaitForRoomInterval?rtcId=rtc-1")
        #expect(ECVAPI.appendingRtcId("a&b", to: "/custom/pollstatus?callid=") == "/custom/pollstatus?callid=a%26b")
    }

    @Test(arguments: [("rtc-1", true), ("3f2b9c04d1e84a7f9b6a0c5e7d2f1a88", true), ("a.b_c~d", true),
                      ("", false), ("a b", false), ("a/b", false), ("ü", false), (String(repeating: "a", count: 129), false)])
    func rtcIdValidity(_ rtcId: String, _ valid: Bool) {
        #expect(ECVAPI.isValidRtcId(rtcId) == valid)
    }

    @Test func queueFiguresForDisplay() {
        let queued = QueueInfoResponse(rtcId: "r", state: .wait, position: 3, ewtSeconds: 61)
        #expect(queued.displayPosition == 3)
        #expect(queued.ewtMinutes == 2)
        let none = QueueInfoResponse(rtcId: "r", state: .wait, position: -1, ewtSeconds: -1)
        #expect(none.displayPosition == nil)
        #expect(none.ewtMinutes == nil)
        let absent = QueueInfoResponse(rtcId: "r", state: .wait)
        #expect(absent.displayPosition == nil && absent.ewtMinutes == nil)
        #expect(QueueInfoResponse(rtcId: "r", state: .wait, position: 1, ewtSeconds: 0).ewtMinutes == 0)
        #expect(queued.withoutQueueFigures == absent)
    }

    /// The service's estimate is outside input: one past a week (or past Int's range, which once
    /// trapped the conversion: the rest fuzzer's crash) shows nothing rather than a number.
    @Test(arguments: [(604_800.0, 10_080), (604_800.5, nil), (1e300, nil), (Double.greatestFiniteMagnitude, nil)])
    func anAbsurdWaitEstimateIsNotShown(_ seconds: Double, _ minutes: Int?) throws {
        let data = Data(#"{"rtcId":"r","state":"wait","ewtSeconds":\#(seconds)}"#.utf8)
        let info = try ECVJSON.decode(QueueInfoResponse.self, from: data)
        #expect(info.ewtMinutes == minutes)
    }
}
