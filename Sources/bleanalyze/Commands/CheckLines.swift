import BLEAnalysis
import BLECapture
import BLEReport
import Dispatch
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `check --jsonl`: every capture analysed on its own core, its line written the moment it is done
/// (completion order, not argument order), and everything about it let go before the next. Memory
/// is that of one analysis per core, whatever the number of files.
enum CheckLines {
    struct Outcome { var failed = false; var unreadable = false }

    static func run(_ walk: CaptureWalk, configuration: RuleConfiguration, failOn level: Severity,
                    scope: PeerScope? = nil, baseline: Baseline? = nil) -> Outcome {
        let files = walk.files
        let writer = LineWriter()
        for (path, reason) in walk.unreadableDirectories {
            writer.write(CaptureLineJSON.unreadable(file: path, sha256: nil, error: reason), failed: false, unreadable: true)
        }
        DispatchQueue.concurrentPerform(iterations: files.count) { i in
            let path = files[i]
            let sha256 = FileDigest.sha256(path: path)
            do throws(CaptureError) {
                let run = try DetectionRun(path: path, configuration: configuration)
                let judged = Check.judge(run, scope: scope, baseline: baseline, level: level)
                if judged.peerMissing || judged.notRead != nil {
                    let reason = judged.notRead ?? "\(scope?.text ?? "") is not in this capture (no connection to it, no advertising from it): nothing was checked"
                    writer.write(CaptureLineJSON.unreadable(file: path, sha256: sha256, error: reason), failed: false, unreadable: true)
                    return
                }
                let line = CaptureLineJSON.render(run.facts, model: run.analyzer.session, hostNotes: run.analyzer.hostNotes,
                                                  findings: judged.findings, sha256: sha256,
                                                  accepted: baseline == nil ? nil : judged.accepted)
                writer.write(line, failed: !judged.failing.isEmpty, unreadable: false)
            } catch {
                Diagnostics.warn(error.description)
                writer.write(CaptureLineJSON.unreadable(file: path, sha256: sha256, error: error.description), failed: false, unreadable: true)
            }
        }
        return writer.outcome
    }
}

/// Whole lines to stdout from several threads: one `write` per line under a lock, so lines never
/// interleave and each reaches a pipe as soon as its capture is done.
final class LineWriter: @unchecked Sendable {   // safe: every access holds the lock
    private let lock = NSLockLike()
    private var state = CheckLines.Outcome()

    func write(_ line: String, failed: Bool, unreadable: Bool) {
        var text = line + "\n"
        lock.locked {
            text.withUTF8 { writeAll(STDOUT_FILENO, $0) }
            state.failed = state.failed || failed
            state.unreadable = state.unreadable || unreadable
        }
    }

    var outcome: CheckLines.Outcome { lock.locked { state } }
}
