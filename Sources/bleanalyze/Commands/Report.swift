import ArgumentParser
import BLEAnalysis
import BLECapture
import BLEReport

/// Options that tune the detectors, shared by the report and `check`.
struct RuleOptions: ParsableArguments {
    @Option(name: .customLong("rule"), parsing: .singleValue,
            help: ArgumentHelp("Switch a rule off (ID=off, a family with pool=off) or set a threshold (ID.NAME=VALUE, see `bleanalyze rules`).",
                               valueName: "ID=off|ID.NAME=VALUE"))
    var rules: [String] = []

    func configuration() throws -> RuleConfiguration {
        var configuration = RuleConfiguration()
        for r in rules {
            if let error = configuration.apply(r, known: Rules.infos) { throw ValidationError(error) }
        }
        return configuration
    }
}

/// One capture analyzed with the detectors.
struct DetectionRun {
    let file: CaptureFile
    let analyzer: Analyzer
    let summary: ReadSummary
    let findings: [Finding]

    init(path: String, configuration: RuleConfiguration) throws(CaptureError) {
        file = try CaptureFile(path: path)
        let analyzer = Analyzer(detect: true, configuration: configuration)
        summary = file.read { analyzer.consume($0) }
        findings = analyzer.finish()
        self.analyzer = analyzer
    }

    var facts: CaptureFacts { CaptureFacts(path: file.path, info: file.info, summary: summary, analyzer: analyzer) }
}

/// `bleanalyze FILE` (the default command): the report a person reads.
struct Report: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "The report: capture summary, connections and findings (the default command).")

    @OptionGroup var capture: CaptureArgument
    @OptionGroup var ruleOptions: RuleOptions
    @Flag(name: .long, help: "One JSON document instead of text (schema: docs/report-schema.json).") var json = false

    func run() throws {
        let configuration = try ruleOptions.configuration()
        let run: DetectionRun
        do { run = try DetectionRun(path: capture.file, configuration: configuration) } catch {
            Diagnostics.warn(error.description)
            throw ExitCode(ExitCodes.badInput)
        }
        var out = Output()
        let model = run.analyzer.session
        out.write(json ? ReportJSON.render(run.facts, model: model, findings: run.findings) + "\n"
                       : ReportText.render(run.facts, model: model, findings: run.findings))
        out.flush()
        for issue in run.summary.issues { Diagnostics.warn("\(capture.file): \(issue)") }
    }
}
