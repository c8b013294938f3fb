import BLEAnalysis
import BLECapture

/// Redaction of a fuzzed capture: it must not fail on a readable HCI or air capture, and the copy
/// must give the same frame count and the same findings (rule, connection, evidence frames), also
/// with every ATT value replaced (`--drop-values`).
enum RedactionCheck {
    struct Key: Hashable { var rule: String; var connection: UInt16?; var frames: [Int] }

    static func run(path: String, redactedPath: String, frames: Int, findings: [Finding], _ check: inout Invariants) {
        for options in [RedactionOptions(), RedactionOptions(dropValues: true)] {
            runOnce(path: path, redactedPath: redactedPath, options: options, frames: frames, findings: findings, &check)
        }
    }

    private static func runOnce(path: String, redactedPath: String, options: RedactionOptions, frames: Int, findings: [Finding],
                                _ check: inout Invariants) {
        defer { Scratch.remove(redactedPath) }
        let what = options.dropValues ? "redaction with --drop-values" : "redaction"
        let summary: RedactionSummary
        do { summary = try Redactor.redact(input: path, output: redactedPath, options: options) } catch {
            check.expect(false, "\(what) failed: \(error)")
            return
        }
        check.expect(summary.frames == frames, "\(what) read \(summary.frames) frames, the analysis \(frames)")
        guard let copy = try? CaptureFile(path: redactedPath) else {
            check.expect(false, "the copy (\(what)) is not readable")
            return
        }
        let analyzer = Analyzer(detect: true)
        defer { analyzer.session.engine = nil }   // the engine ↔ model cycle (see CaptureHarness)
        let read = copy.read { analyzer.consume($0) }
        check.expect(read.frames == frames, "the copy (\(what)) has \(read.frames) frames, the original \(frames)")
        let before = Set(findings.map { Key(rule: $0.rule, connection: $0.connection, frames: $0.frames) })
        let after = Set(analyzer.finish().map { Key(rule: $0.rule, connection: $0.connection, frames: $0.frames) })
        check.expect(before == after, "findings differ after \(what): lost \(before.subtracting(after)), gained \(after.subtracting(before))")
    }
}
