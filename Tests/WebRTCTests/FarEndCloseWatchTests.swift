import Synchronization
import Testing
@testable import WebRTC

/// What `FarEndCloseWatch` takes for the far end's close: a DTLS alert record after the
/// handshake (encrypted, epoch 1 or later), and nothing else a transport carries.
struct FarEndCloseWatchTests {
    /// A DTLS record: type, version DTLS 1.2, epoch, sequence 0, then `body`.
    static func record(type: UInt8, epoch: UInt16, body: [UInt8]) -> [UInt8] {
        [type, 0xfe, 0xfd, UInt8(epoch >> 8), UInt8(epoch & 0xff), 0, 0, 0, 0, 0, 1, UInt8(body.count >> 8), UInt8(body.count & 0xff)] + body
    }

    @Test func onlyAPostHandshakeAlertIsAClose() {
        let encryptedAlert = Self.record(type: 21, epoch: 1, body: Array(repeating: 0x5a, count: 26))
        let cases: [([UInt8], Bool, String)] = [
            (encryptedAlert, true, "close_notify as Chromium and aiortc send it"),
            (Self.record(type: 23, epoch: 1, body: [1, 2, 3]) + encryptedAlert, true, "after application data in one datagram"),
            (Self.record(type: 21, epoch: 0, body: [2, 40]), false, "a handshake alert in the clear (the handshake's own failure)"),
            (Self.record(type: 23, epoch: 1, body: Array(repeating: 7, count: 40)), false, "SCTP in application data"),
            (Self.record(type: 22, epoch: 1, body: Array(repeating: 7, count: 40)), false, "the Finished message"),
            ([0x80, 0x60] + Array(repeating: 0, count: 20), false, "SRTP"),
            ([0x00, 0x01, 0x00, 0x00] + Array(repeating: 0, count: 16), false, "STUN"),
            (Array(encryptedAlert.prefix(20)), false, "a record cut short"),
        ]
        for (bytes, closes, what) in cases {
            #expect(bytes.withUnsafeBytes { FarEndCloseWatch.isPostHandshakeAlert($0) } == closes, "\(what)")
        }
    }

    @Test func theCloseIsReportedOnceAndTheProbeLetGo() {
        let reports = Mutex(0)
        let watch = FarEndCloseWatch { _ in reports.withLock { $0 += 1 } }
        let alert = Self.record(type: 21, epoch: 1, body: Array(repeating: 1, count: 26))
        let media = [UInt8]([0x80, 0x60] + Array(repeating: 0, count: 20))
        #expect(media.withUnsafeBytes { watch.received($0) }, "keeps watching")
        #expect(!alert.withUnsafeBytes { watch.received($0) }, "reported: the probe can go")
        #expect(!alert.withUnsafeBytes { watch.received($0) })
        #expect(reports.withLock { $0 } == 1)
    }
}
