import Foundation
import Testing

/// A compressed input that inflates past its bound (a compression bomb) stops with a clear error and
/// exit 2 instead of filling the disk; the same file under the default bound reads normally.
@Suite(.enabled(if: CLI.tool("gzip", ["--version"]), "gzip is not installed"))
struct CompressionBoundTests {
    @Test func inflationPastTheBoundIsAClearError() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bleanalyze-bomb-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let copy = dir.appendingPathComponent("healthy.btsnoop").path
        try FileManager.default.copyItem(atPath: CLI.capture("healthy.btsnoop"), toPath: copy)
        let gzip = Process()
        gzip.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        gzip.arguments = ["gzip", "-n", copy]
        try gzip.run()
        gzip.waitUntilExit()
        try #require(gzip.terminationStatus == 0)
        let bombed = try CLI.run(["info", copy + ".gz"], environment: ["BLEANALYZE_MAX_INFLATED": "1000"])
        #expect(bombed.status == 2)
        #expect(bombed.stderr.contains("inflates to more than 1000 bytes"), "\(bombed.stderr)")
        let normal = try CLI.run(["info", copy + ".gz"])
        #expect(normal.status == 0, "\(normal.stderr)")
    }
}
