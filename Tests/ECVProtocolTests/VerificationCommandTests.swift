import ECVProtocol
import Testing

@Suite("Verification commands")
struct VerificationCommandTests {
    @Test func documentTableIsThere() throws {
        #expect(try ProtocolDocument.load().verificationRows.count >= 10)
    }

    /// Each row of the table in docs/protocol.md §4.1: parses as documented and re-sends canonically.
    @Test(arguments: ProtocolDocument.contentsOrEmpty.verificationRows)
    func documentedRow(_ row: ProtocolDocument.TableRow) {
        let command = VerificationCommand(parsing: row.received)
        #expect(command?.description ?? "nil" == row.parsed)
        #expect(command?.text ?? "—" == row.canonical)
        if let command { #expect(VerificationCommand(parsing: command.text) == command, "the canonical text must parse back the same") }
    }

    @Test func aDetailIsOneBoundedLine() throws {
        let long = String(repeating: "x", count: 400)
        let parsed = try #require(VerificationCommand(parsing: "OCR_RETRY|FAILED|line one\r\nline two " + long))
        guard case .retryOutcome(.ocr, .failed, let detail?) = parsed else { Issue.record("parsed as \(parsed)"); return }
        #expect(detail.count == VerificationCommand.maxDetailLength)
        #expect(detail.hasPrefix("line one  line two x"))
        // What the app hands in is normalized the same way on the way out.
        #expect(VerificationCommand.retryOutcome(.face, .succeeded, detail: " two\nlines ").text == "FACE_RETRY|SUCCEEDED|two lines")
        #expect(VerificationCommand.retryOutcome(.face, .succeeded, detail: " \n ").text == "FACE_RETRY|SUCCEEDED")
    }

    @Test func verificationTextIsNoKnownDataChannelCommand() {
        for text in ["OCR_RETRY", "FACE_RETRY|STARTED", "CALL_RESULT"] {
            #expect(DataChannelCommand(parsing: text) == .raw(text))
        }
    }
}
