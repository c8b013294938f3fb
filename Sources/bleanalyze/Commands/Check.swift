import ArgumentParser
import BLEAnalysis
import BLECapture
import BLEReport
import Dispatch

/// `bleanalyze check FILE... --fail-on LEVEL [--junit out.xml]`: the CI gate.
struct Check: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "CI gate: analyze captures and exit 1 when a finding reaches --fail-on.",
        discussion: "Files are analyzed in parallel (one per core). Exit 0: nothing at or above the level; 1: findings; 2: a file could not be read.")

    @Argument(help: "Captures to check.") var files: [String]
    @Option(name: .long, help: "Fail on findings at or above this severity: error, warning or info.") var failOn: String = "error"
    @Option(name: .long, help: "Write a JUnit XML report (one test suite per file, one test case per rule).") var junit: String?
    @Flag(name: .long, help: "Print the findings as JSON (one document).") var json = false
    @OptionGroup var ruleOptions: RuleOptions

    func validate() throws {
        guard Severity(rawValue: failOn) != nil else { throw ValidationError("--fail-on takes error, warning or info, not \(failOn)") }
    }

    func run() throws {
        let level = Severity(rawValue: failOn) ?? .error
        let configuration = try ruleOptions.configuration()
        let results = CheckResults(count: files.count)
        let files = self.files
        let progress = ProgressBar.forFiles(files)   // nil unless stderr is a terminal (one file: only if ≥ 50 MB)
        DispatchQueue.concurrentPerform(iterations: files.count) { i in
            do throws(CaptureError) {
                results.set(i, .success(try DetectionRun(path: files[i], configuration: configuration, progress: progress, slot: i)))
            } catch {
                results.set(i, .failure(error))
                progress?.complete(slot: i)
            }
        }
        progress?.finish()
        var out = Output()
        var failed = false, unreadable = false
        var suites: [JUnit.Suite] = []
        var w = JSONWriter()
        w.beginObject()
        w.string("failOn", level.rawValue)
        w.beginArray("files")
        for (i, path) in files.enumerated() {
            switch results.get(i) {
            case let .success(run):
                let over = run.findings.filter { $0.severity >= level }
                failed = failed || !over.isEmpty
                if !json {
                    out.line("\(over.isEmpty ? "PASS" : "FAIL")  \(path): \(Self.counts(run.findings))")
                    for f in over { out.line("      \(f.severity.rawValue.uppercased()) \(f.rule) frames \(f.frames.map { "#\($0)" }.joined(separator: ",")): \(f.message)") }
                }
                w.beginObject(); w.string("file", path); w.bool("passed", over.isEmpty)
                w.beginArray("findings"); for f in run.findings { ReportJSON.finding(f, &w) }; w.endArray(); w.endObject()
                suites.append(JUnit.suite(file: path, findings: run.findings, failOn: level, frames: run.summary.frames))
            case let .failure(error):
                unreadable = true
                Diagnostics.warn(error.description)
                if !json { out.line("ERROR \(path): \(error)") }
                w.beginObject(); w.string("file", path); w.string("error", error.description); w.endObject()
                suites.append(JUnit.unreadable(file: path, error: error.description))
            case nil:
                break
            }
        }
        w.endArray()
        w.bool("passed", !failed && !unreadable)
        w.endObject()
        if json { out.line(w.output) }
        out.flush()
        if let junit {
            do { try JUnit.document(suites).write(to: junit) } catch {
                Diagnostics.warn("cannot write \(junit): \(error)")
                throw ExitCode(ExitCodes.badInput)
            }
        }
        if unreadable { throw ExitCode(ExitCodes.badInput) }
        if failed { throw ExitCode(ExitCodes.findings) }
    }

    static func counts(_ findings: [Finding]) -> String {
        Severity.allCases.reversed().map { sev in "\(findings.filter { $0.severity == sev }.count) \(sev.rawValue)" }.joined(separator: ", ")
    }
}

/// Results written from several threads, each index once.
final class CheckResults: @unchecked Sendable {   // safe: every access holds the lock
    private var values: [Result<DetectionRun, CaptureError>?]
    private let lock = NSLockLike()
    init(count: Int) { values = Array(repeating: nil, count: count) }
    func set(_ i: Int, _ v: Result<DetectionRun, CaptureError>) { lock.locked { values[i] = v } }
    func get(_ i: Int) -> Result<DetectionRun, CaptureError>? { lock.locked { values[i] } }
}
