import Foundation
@testable import MediaPipeline
import Testing

/// Compiled graphs must render byte for byte like `pipelines/golden/<name>.launch` (and the
/// self-running variant like `<name>.testrun.launch`). Run with `ECV_UPDATE_GOLDENS=1` to rewrite
/// them after an intended change, then review the diff and run `pipelines/check-goldens.sh`.
@Suite("Golden launch descriptions")
struct GoldenTests {
    static let directory = Fixtures.pipelinesDirectory.appendingPathComponent("golden")
    static let updating = ProcessInfo.processInfo.environment["ECV_UPDATE_GOLDENS"] == "1"

    @Test("graph renders like its golden", arguments: GoldenCase.all)
    func matchesGolden(_ golden: GoldenCase) throws {
        try check(text: golden.launch(), file: "\(golden.name).launch")
        if let testRun = golden.testRun {
            try check(text: testRun(), file: "\(golden.name).testrun.launch")
        }
    }

    @Test("no stale golden files")
    func noStaleGoldens() throws {
        let expected = Set(GoldenCase.all.flatMap { golden in
            ["\(golden.name).launch"] + (golden.testRun == nil ? [] : ["\(golden.name).testrun.launch"])
        })
        let present = Set(try FileManager.default.contentsOfDirectory(atPath: Self.directory.path).filter { $0.hasSuffix(".launch") })
        #expect(present.subtracting(expected).isEmpty, "golden files without a case: \(present.subtracting(expected).sorted())")
        #expect(expected.subtracting(present).isEmpty, "cases without a golden file: \(expected.subtracting(present).sorted())")
    }

    private func check(text: String, file: String) throws {
        let url = Self.directory.appendingPathComponent(file)
        let content = text + "\n"
        if Self.updating {
            try FileManager.default.createDirectory(at: Self.directory, withIntermediateDirectories: true)
            try content.write(to: url, atomically: true, encoding: .utf8)
            return
        }
        let golden = try String(contentsOf: url, encoding: .utf8)
        #expect(golden == content, "\(file) differs; rerun with ECV_UPDATE_GOLDENS=1 if the change is intended")
    }
}
