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
            --peer NAME|ADDR keeps the findings about that device (and those about the capture as a whole); a \
            file where the device is never seen is an error, not a pass. --baseline FILE accepts the findings it \
            lists (by rule, peer name, address, GATT table (gatt:XXXXXXXX, kept by redact) or *, attribute handle, up to a \
            count and a severity): findings \
            beyond it fail. --write-baseline FILE writes FILE from this run's findings at or above --fail-on \
            (text, one RULE<TAB>PEER<TAB>ATTRIBUTE<TAB>COUNT<TAB>SEVERITY a line; README "CI: scope and baseline"). \
            Exit 0: nothing at or above the level; 1: findings; 2: a file could not be read (or --peer not in it).
            """)

    @Argument(help: "Captures to check, or directories holding them.") var files: [String]
    @Option(name: .long, help: "Fail on findings at or above this severity: error, warning or info.") var failOn: String = "error"
    @Option(name: .long, help: "Write a JUnit XML report (one test suite per file, one test case per rule).") var junit: String?
    @Flag(name: .long, help: "Print the findings as JSON (one document).") var json = false
    @Flag(name: .long, help: "Print one JSON object per capture, one per line, as each finishes (docs/check-jsonl-schema.json).")
    var jsonl = false
    @Flag(name: .long, help: "Skip named files that are neither captures by their bytes nor by their name, as in directories.")
    var onlyCaptures = false
    @Option(name: .long, help: ArgumentHelp("Only findings about this device: its name or address (and those about the capture as a whole).", valueName: "NAME|ADDR"))
    var peer: String?
    @Option(name: .long, help: ArgumentHelp("Accepted findings (rule, peer, attribute): only findings not listed fail.", valueName: "FILE"))
    var baseline: String?
    @Option(name: .long, help: ArgumentHelp("Write the findings at or above --fail-on to FILE as a baseline (accept them).", valueName: "FILE"))
    var writeBaseline: String?
    @OptionGroup var ruleOptions: RuleOptions

    func validate() throws {
        guard Severity(rawValue: failOn) != nil else { throw ValidationError("--fail-on takes error, warning or info, not \(failOn)") }
        guard !(json && jsonl) else { throw ValidationError("--json and --jsonl: choose one") }
        guard !(jsonl && junit != nil) else { throw ValidationError("--junit and --jsonl: choose one") }
        guard !(jsonl && writeBaseline != nil) else { throw ValidationError("--write-baseline and --jsonl: choose one") }
        if let peer, peer.isEmpty { throw ValidationError("--peer takes a name or an address") }
    }

    /// Scopes and weighs one run's findings: those about `--peer`, and of those the ones at or above the
    /// level that the baseline does not accept.
    static func judge(_ run: DetectionRun, scope: PeerScope?, baseline: Baseline?, level: Severity) -> CheckedFile {
        judge(run.findings, analyzer: run.analyzer, info: run.file.info, frames: run.summary.frames,
              scope: scope, baseline: baseline, level: level)
    }

    /// `judge` of one finished pass (a file's, or `live`'s session).
    static func judge(_ all: [Finding], analyzer: Analyzer, info: CaptureInfo, frames: Int,
                      scope: PeerScope?, baseline: Baseline?, level: Severity) -> CheckedFile {
        let model = analyzer.session
        let findings = scope.map { s in all.filter { s.matches($0, model) } } ?? all
        var file = CheckedFile(findings: findings, frames: frames)
        if let reason = info.notDecodedReason {
            file.notRead = reason
        } else if frames > 0, analyzer.air.unreadablePackets == frames {
            file.notRead = "none of its \(frames) frames could be decoded (\(info.datalinkName)): nothing was checked"
        } else if let scope, !scope.seen(in: model) {
            file.peerMissing = true
        }
        let over = findings.enumerated().filter { $0.element.severity >= level }.map { (index: $0.offset, finding: $0.element) }
        let prints = over.isEmpty ? [:] : Baseline.gattPrints(model)
        for (_, f) in over {
            let key = Baseline.key(f, model, gatt: prints)
            let seen = file.keys[key]
            file.keys[key] = ((seen?.count ?? 0) + 1, max(seen?.severity ?? f.severity, f.severity))
        }
        if let baseline {
            let judged = baseline.judge(over, model)
            (file.accepted, file.failing, file.baselineReasons) = (judged.accepted, judged.failing, judged.reasons)
        } else {
            file.failing = over.map(\.index)
        }
        return file
    }

    func run() throws {
        let level = Severity(rawValue: failOn) ?? .error
        let configuration = try ruleOptions.configuration()
        let scope = peer.map(PeerScope.init)
        let baseline = try baseline.map { path throws(ValidationError) in try Baseline(path: path) }
        let walk = CaptureWalk(self.files, filterFiles: onlyCaptures)
        if !walk.skipped.isEmpty {
            let shown = walk.skipped.prefix(3).joined(separator: ", ") + (walk.skipped.count > 3 ? ", …" : "")
            Diagnostics.warn("skipped \(walk.skipped.count) files that are not captures (\(shown))")
        }
        if jsonl {
            let outcome = CheckLines.run(walk, configuration: configuration, failOn: level, scope: scope, baseline: baseline)
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
                results.set(i, .success(Self.judge(run, scope: scope, baseline: baseline, level: level)))
            } catch {
                results.set(i, .failure(error))
                progress?.complete(slot: i)
            }
        }
        progress?.finish()
        var out = Output()
        var failed = false, unreadable = false
        var suites: [JUnit.Suite] = []
        var keys: [Baseline.Key: (count: Int, severity: Severity)] = [:]
        var w = JSONWriter()
        w.beginObject()
        w.string("failOn", level.rawValue)
        w.beginArray("files")
        for (i, path) in files.enumerated() {
            switch results.get(i) {
            case let .success(run) where run.peerMissing || run.notRead != nil:
                let reason = run.notRead ?? "\(peer ?? "") is not in this capture (no connection to it, no advertising from it): nothing was checked"
                unreadable = true
                Diagnostics.warn("\(path): \(reason)")
                if !json { out.line("ERROR \(path): \(reason)") }
                w.beginObject(); w.string("file", path); w.string("error", reason); w.endObject()
                suites.append(JUnit.unreadable(file: path, error: reason))
            case let .success(run):
                let over = run.failing.map { run.findings[$0] }
                failed = failed || !over.isEmpty
                keys.merge(run.keys) { a, b in (a.count + b.count, max(a.severity, b.severity)) }
                if !json {
                    let accepted = run.accepted.isEmpty ? "" : " (\(run.accepted.count) accepted by the baseline)"
                    out.line("\(over.isEmpty ? "PASS" : "FAIL")  \(path): \(Self.counts(run.findings))\(accepted)")
                    for i in run.failing {
                        let f = run.findings[i]
                        out.line("      \(f.severity.rawValue.uppercased()) \(f.rule) frames \(f.frames.map { "#\($0)" }.joined(separator: ",")): \(f.text)")
                        if let why = f.causeText { out.line("        why: \(why)") }
                        if let reason = run.baselineReasons[i] { out.line("        baseline: \(reason)") }
                    }
                }
                w.beginObject(); w.string("file", path); w.bool("passed", over.isEmpty)
                w.beginArray("findings"); for f in run.findings { ReportJSON.finding(f, &w) }; w.endArray()
                if baseline != nil {
                    // Indexes into `findings` of those the baseline accepts.
                    w.beginArray("acceptedByBaseline"); for i in run.accepted.sorted() { w.int(nil, i) }; w.endArray()
                }
                w.endObject()
                suites.append(JUnit.suite(file: path, findings: over + run.findings.filter { $0.severity < level }, failOn: level, frames: run.frames))
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
        if let writeBaseline {
            let command = (["bleanalyze"] + CommandLine.arguments.dropFirst()).joined(separator: " ")
            do { try Baseline.render(keys, command: command).write(to: writeBaseline) } catch {
                Diagnostics.warn("cannot write \(writeBaseline): \(error)")
                throw ExitCode(ExitCodes.badInput)
            }
            Diagnostics.message("baseline: \(keys.count) accepted findings written to \(writeBaseline)")
            if unreadable { throw ExitCode(ExitCodes.badInput) }
            return
        }
        if failed {
            Diagnostics.message("to accept these findings: the same command with --write-baseline FILE, then --baseline FILE")
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
    /// The findings (about `--peer`, when given).
    var findings: [Finding]
    var frames: Int
    /// Indexes in `findings` at or above the level: not in the baseline, and accepted by it.
    var failing: [Int] = []
    var accepted: Set<Int> = []
    /// The baseline keys of the findings at or above the level, how many and the highest severity (for `--write-baseline`).
    var keys: [Baseline.Key: (count: Int, severity: Severity)] = [:]
    /// Why the baseline did not accept a finding it lists (a count or severity beyond it), by index.
    var baselineReasons: [Int: String] = [:]
    /// `--peer` names a device this capture never shows.
    var peerMissing = false
    /// The file opened but was not decoded (a link type we do not read, or no frame decodable): not a pass.
    var notRead: String?
}

/// Results written from several threads, each index once.
final class CheckResults: @unchecked Sendable {   // safe: every access holds the lock
    private var values: [Result<CheckedFile, CaptureError>?]
    private let lock = NSLockLike()
    init(count: Int) { values = Array(repeating: nil, count: count) }
    func set(_ i: Int, _ v: Result<CheckedFile, CaptureError>) { lock.locked { values[i] = v } }
    func get(_ i: Int) -> Result<CheckedFile, CaptureError>? { lock.locked { values[i] } }
}
