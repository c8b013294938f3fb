import BLECapture
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A log still being written can shrink under the reader (truncated, rotated). A memory-mapped read
/// would die with SIGBUS on the first vanished page; the reader stops there with a clear issue
/// instead, having delivered every complete frame before it.
@Suite struct ShrinkingFileTests {
    #if os(Linux)
    @Test(arguments: ["healthy.btsnoop", "write_without_response.btsnoop"])
    func fileTruncatedWhileReadStopsWithAnIssue(name: String) throws {
        let original = [UInt8](try Data(contentsOf: CaptureTestPaths.repoRoot.appendingPathComponent("captures/\(name)")))
        // Several pages, so that the pages after the cut are not yet touched when the file shrinks.
        var big = original
        while big.count < 256 << 10 { big += original.dropFirst(16) }
        let path = try CaptureTestPaths.temporaryFile("shrink-" + name, big)
        let total = try CaptureFile(path: path).read { _ in }.frames
        let file = try CaptureFile(path: path)
        var seen = 0
        let summary = file.read { frame in
            seen += 1
            if frame.number == 10 { #expect(truncate(path, 8192) == 0) }
        }
        #expect(summary.frames == seen)
        #expect(seen < total)
        let issue = try #require(summary.issues.last)
        guard case let .fileShrank(at) = issue.kind else { Issue.record("expected fileShrank, got \(issue)"); return }
        #expect(at >= 8192 - 4096 && at <= 8192 + 4096, "the first vanished page is near the new end: \(at)")
        #expect(issue.description.contains("shrank"))
        #expect(summary.truncated)
    }
    #endif
}
