import ECVProtocol
import Testing

@Suite("Data-channel commands")
struct DataChannelCommandTests {
    @Test func documentTableIsWellFormed() throws {
        let contents = try ProtocolDocument.load()
        #expect(contents.dataChannelRows.count >= 20)
        #expect(contents.malformedTableLines.isEmpty, "rows without 3 cells at lines \(contents.malformedTableLines)")
    }

    /// Each row of the table in docs/protocol.md §4: parses as documented and re-sends canonically.
    @Test(arguments: ProtocolDocument.contentsOrEmpty.dataChannelRows)
    func documentedRow(_ row: ProtocolDocument.TableRow) {
        let command = DataChannelCommand(parsing: row.received)
        #expect(command.description == row.parsed)
        #expect(command.text == row.canonical)
        #expect(DataChannelCommand(parsing: command.text) == command, "the canonical text must parse back the same")
    }

    @Test func parsesToExactValues() {
        #expect(DataChannelCommand(parsing: "HOLD|rtc-1") == .hold(rtcId: "rtc-1"))
        #expect(DataChannelCommand(parsing: "PICKUP") == .pickup(rtcId: nil))
        #expect(DataChannelCommand(parsing: "FLASH_OFF|unavailable") == .flashReply(request: .off, approval: .unavailable))
        #expect(DataChannelCommand(parsing: "STATUS|VIDEO|UNMUTED|r") == .status(media: .video, muted: false, rtcId: "r"))
        #expect(DataChannelCommand(parsing: "TAKE_PHOTO_ON") == .takePhotoOn)
    }

    @Test func surroundingWhitespaceIsIgnoredButRawTextIsKeptExactly() {
        #expect(DataChannelCommand(parsing: "  HOLD | rtc-1 \r\n") == .hold(rtcId: "rtc-1"))
        #expect(DataChannelCommand(parsing: " hello ") == .raw(" hello "))
        #expect(DataChannelCommand(parsing: " hello ").text == " hello ")
        #expect(DataChannelCommand(parsing: "") == .raw(""))
        #expect(DataChannelCommand(parsing: "|") == .raw("|"))
    }

    @Test func rtcIdCaseIsPreservedWhileKeywordsAreNot() {
        #expect(DataChannelCommand(parsing: "hOlD|AbC") == .hold(rtcId: "AbC"))
        #expect(DataChannelCommand(parsing: "STATUS|audio|Muted|AbC") == .status(media: .audio, muted: true, rtcId: "AbC"))
    }

    /// Found by the `datachannel` fuzz target: a field ending in a line break (here a vertical
    /// tab) kept it, so the canonical text, trimmed as a whole, parsed back to another rtcId.
    @Test func fieldsAreTrimmedOfLineBreaksToo() {
        let command = DataChannelCommand(parsing: "HOLD|rtc-1\u{0B}|x")
        #expect(command == .hold(rtcId: "rtc-1"))
        #expect(DataChannelCommand(parsing: command.text) == command)
        #expect(DataChannelCommand(parsing: "STATUS|AUDIO\n|MUTED") == .status(media: .audio, muted: true, rtcId: nil))
    }

    /// Keywords match ASCII case-insensitively and nothing else folds into them.
    @Test func onlyASCIILettersFoldIntoKeywords() {
        #expect(DataChannelCommand(parsing: "\u{17F}tatus|audio|muted") == .raw("\u{17F}tatus|audio|muted"))
        #expect(DataChannelCommand(parsing: "\u{FB02}ash_on") == .raw("\u{FB02}ash_on"))
        #expect(DataChannelCommand(parsing: "STATUS|aud\u{131}o|MUTED") == .raw("STATUS|aud\u{131}o|MUTED"))
    }

    @Test(arguments: [
        DataChannelCommand.hold(rtcId: "x"), .hold(rtcId: nil), .pickup(rtcId: "x"), .pickup(rtcId: nil),
        .flashOn, .flashOff,
        .flashReply(request: .on, approval: .accepted), .flashReply(request: .on, approval: .refused),
        .flashReply(request: .on, approval: .unavailable), .flashReply(request: .off, approval: .accepted),
        .flashReply(request: .off, approval: .refused), .flashReply(request: .off, approval: .unavailable),
        .takePhotoOn, .takePhotoOff,
        .status(media: .audio, muted: true, rtcId: "x"), .status(media: .audio, muted: false, rtcId: nil),
        .status(media: .video, muted: true, rtcId: nil), .status(media: .video, muted: false, rtcId: "x"),
        .raw("anything|else"),
    ])
    func everyCommandSurvivesItsOwnText(_ command: DataChannelCommand) {
        #expect(DataChannelCommand(parsing: command.text) == command)
    }
}
