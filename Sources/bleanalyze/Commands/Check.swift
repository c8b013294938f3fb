import ArgumentParser
import BLEAnalysis
import BLECapture
import BLEReport
import Dispatch

/// `bleanalyze check PATH... --fail-on LEVEL [--junit out.xml | --json | --jsonl]`: the CI gate, and
/// (with `--jsonl`) one JSON line per capture for fleets of field logs (docs/FLEET.md).
struct Check: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "CI gate: analyze captures and exit 1 when a finding reaches --fail-on.",
        discussion: """
            Directories are searched for captures (recursively; files whose bytes are not a capture or field log, \
            and whose names do not promise one, are skipped). Files are analyzed in parallel (one per core). \
            --jsonl prints one JSON object per capture as each finishes (schema: docs/check-jsonl-schema.json); an \
            unreadable file gets a line with `error` and the run goes on. \
            Exit 0: nothing at or above the level; 1: findings; 2: a file could not be read.
            """)

    @Argument(help: "Captures to check, or directories holding them.") var files: [String]
    @Option(name: .long, help: "Fail on findings at or above this severity: error, warning or info.") var failOn: String = "error"
    @Option(name: .long, help: "Write a JUnit XML report (one test suite per file, one test case per rule).") var junit: String?
    @Flag(name: .long, help: "Print the findings as JSON (one document).") var json = false
    @Flag(name: .long, help: "Print one JSON object per capture, one per line, as each finishes (docs/check-jsonl-schema.json).")
    var jsonl = false
    @Flag(name: .long, help: "Skip named files that are neither captures by their bytes nor by their name, as in directories.")
    var onlyCaptures = false
    @OptionGroup var ruleOptions: RuleOptions

    func validate() throws {
        guard Severity(rawValue: failOn) != nil else { throw ValidationError("--fail-on takes error, warning or info, not \(failOn)") }
        guard !(json && jsonl) else { throw ValidationError("--json and --jsonl: choose one") }
        guard !(jsonl && junit != nil) else { throw ValidationError("--junit and --jsonl: choose one") }
    }

    func run() throws {
        let level = Severity(rawValue: failOn) ?? .error
        let configuration = try ruleOptions.configuration()
        let walk = CaptureWalk(self.files, filterFiles: onlyCaptures)
        if !walk.skipped.isEmpty {
            let shown = walk.skipped.prefix(3).joined(separator: ", ") + (walk.skipped.count > 3 ? ", …" : "")
            Diagnostics.warn("skipped \(walk.skipped.count) files that are not captures (\(shown))")
        }
        if jsonl {
            let outcome = CheckLines.run(walk, configuration: configuration, failOn: level)
            if outcome.unreadable { throw ExitCode(ExitCodes.badInput) }
            if outcome.failed { throw ExitCode(ExitCodes.findings) }
            return
        }
        let files = walk.files
        let results = CheckResults(count: files.count)
        let progress = ProgressBar.forFiles(files)   // nil unless stderr is a terminal (one file: only if ≥ 50 MB)
        DispatchQueue.concurrentPerform(iterations: files.count) { i in
            do throws(CaptureError) {
                let run = try DetectionRun(path: files[i], configuration: configuration, progress: progress, slot: i)
                results.set(i, .success(CheckedFile(findings: run.findings, frames: run.summary.frames)))
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
                    for f in over { out.line("      \(f.severity.rawValue.uppercased()) \(f.rule) frames \(f.frames.map { "#\($0)" }.joined(separator: ",")): \(f.text)") }
                }
                w.beginObject(); w.string("file", path); w.bool("passed", over.isEmpty)
                w.beginArray("findings"); for f in run.findings { ReportJSON.finding(f, &w) }; w.endArray(); w.endObject()
                suites.append(JUnit.suite(file: path, findings: run.findings, failOn: level, frames: run.frames))
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
        for (path, reason) in walk.unreadableDirectories {
            unreadable = true
            Diagnostics.warn("\(path): \(reason)")
            if !json { out.line("ERROR \(path): \(reason)") }
            w.beginObject(); w.string("file", path); w.string("error", reason); w.endObject()
            suites.append(JUnit.unreadable(file: path, error: reason))
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

/// What the summary needs of one analysed file (the session model is let go as soon as it is done).
struct CheckedFile {
    var findings: [Finding]
    var frames: Int
}

/// Results written from several threads, each index once.
final class CheckResults: @unchecked Sendable {   // safe: every access holds the lock
    private var values: [Result<CheckedFile, CaptureError>?]
    private let lock = NSLockLike()
    init(count: Int) { values = Array(repeating: nil, count: count) }
    func set(_ i: Int, _ v: Result<CheckedFile, CaptureError>) { lock.locked { values[i] = v } }
    func get(_ i: Int) -> Result<CheckedFile, CaptureError>? { lock.locked { values[i] } }
}
