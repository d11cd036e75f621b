import ECVProtocol
import Testing

@Suite struct LogTextTests {
    @Test func plainTextIsUnchanged() {
        #expect(LogText.sanitized("DialEx rtc-1 → 200 ix-1, queue Billing (Jane Doe, Çağrı)") == "DialEx rtc-1 → 200 ix-1, queue Billing (Jane Doe, Çağrı)")
    }

    @Test func nothingCanStartAnotherLineOrTurnTheLineAround() {
        let forged = LogText.sanitized("x\n#7 [rest] Hangup rtc-1 → ended\r\u{2028}\u{202E}evil\u{0}\u{1B}[31m")
        #expect(!forged.contains("\n") && !forged.contains("\r") && !forged.unicodeScalars.contains { $0.properties.generalCategory == .control })
        #expect(forged == #"x\n#7 [rest] Hangup rtc-1 → ended\r\u{2028}\u{202E}evil\u{0}\u{1B}[31m"#)
    }

    @Test func longTextIsCutAndSaysHowMuchWasDropped() {
        let cut = LogText.sanitized(String(repeating: "a", count: 10_000), limit: 100)
        #expect(cut == String(repeating: "a", count: 100) + "… (9900 more bytes)")
        #expect(LogText.sanitized(String(repeating: "é", count: 100), limit: 11).hasPrefix("ééééé…"))
    }
}
