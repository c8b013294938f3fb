import ArgumentParser
import BLEAnalysis
import BLECapture
import BLEReport

/// `bleanalyze diff BEFORE AFTER`: the same device and scenario recorded twice, compared point by
/// point (docs/DIFF.md). Each capture is analysed in one pass; the comparison is typed
/// (`CaptureComparison`), the output formats it.
struct Diff: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Compare two captures of the same device and scenario: set-up, parameters, GATT, traffic, answer times, findings.",
        discussion: """
            Peers are paired by identity address, name, public or static address, GATT table or manufacturer \
            data (never by a private address); their connections in order. Every value names its frames \
            (before → after). --fail-on regression exits 1 on a new warning or error (or one that grew in \
            count or severity), a median answer time slower by more than --slower PCT % and --slower-floor MS, \
            or a GATT table change unless --allow-gatt-change. Schema of --json: docs/diff-schema.json.
            """)

    @Argument(help: "The capture before the change.") var before: String
    @Argument(help: "The capture after the change.") var after: String
    @Flag(name: .long, help: "JSON instead of text (docs/diff-schema.json).") var json = false
    @Option(name: .long, help: ArgumentHelp("Write a self-contained HTML page.", valueName: "OUT.html")) var html: String?
    @Option(name: .long, help: "Exit 1 on a regression: `regression`, or `never` (default).") var failOn: String = "never"
    @Option(name: .long, help: "A median answer time is slower when it grew by more than this percentage…") var slower: Double = 25
    @Option(name: .long, help: "…and by more than this many milliseconds.") var slowerFloor: Double = 2
    @Flag(name: .long, help: "A changed GATT table is not a regression.") var allowGattChange = false
    @OptionGroup var ruleOptions: RuleOptions

    func validate() throws {
        guard ["regression", "never"].contains(failOn) else { throw ValidationError("--fail-on takes regression or never, not \(failOn)") }
        guard slower >= 0, slowerFloor >= 0 else { throw ValidationError("--slower and --slower-floor take 0 or more") }
    }

    func run() throws {
        let configuration = try ruleOptions.configuration()
        func profile(_ path: String) throws -> CaptureProfile {
            let arg = try CaptureArgument.parse([path])
            let run = try arg.exitOnError { p throws(CaptureError) in try DetectionRun(path: p, name: arg.name, configuration: configuration) }
            for issue in run.summary.issues { Diagnostics.warn("\(arg.name): \(issue)") }
            return CaptureProfile(run.analyzer.session, findings: run.findings, frames: run.summary.frames)
        }
        let b = try profile(before), a = try profile(after)
        var options = CaptureComparison.Options()
        options.slowerFraction = slower / 100
        options.slowerFloorMicros = Int64(slowerFloor * 1000)
        options.allowGATTChange = allowGattChange
        let d = CaptureComparison(before: b, after: a, options: options)
        let failed = failOn == "regression" && !d.regressions.isEmpty
        var out = Output()
        if json {
            out.line(DiffJSON.render(d, before: (before, b.frames), after: (after, a.frames), failed: failed))
        } else {
            out.write(DiffText.render(d, before: before, after: after))
        }
        out.flush()
        if let html {
            do { try DiffHTML.render(d, before: before, after: after).write(to: html) } catch {
                Diagnostics.warn("cannot write \(html): \(error)")
                throw ExitCode(ExitCodes.badInput)
            }
        }
        if failed { throw ExitCode(ExitCodes.findings) }
    }
}
