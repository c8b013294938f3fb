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

    @Option(name: .customLong("keep-connections"),
            help: ArgumentHelp("Finished connections kept whole (default 1000; an HTML page keeps all unless given); past it the oldest are summarised: a row each, their findings kept (past 100 info and 1000 warnings per rule, counted), stories let go. `all`: keep every one. Give `live` and `report` the same value to compare them.",
                               valueName: "N|all"))
    var keepConnections: String?

    func configuration() throws -> RuleConfiguration {
        var configuration = RuleConfiguration()
        for r in rules {
            if let error = configuration.apply(r, known: Rules.infos) { throw ValidationError(error) }
        }
        if let keep = keepConnections {
            if keep == "all" {
                configuration.summary.finishedConnections = nil
            } else if let n = Int(keep), n >= 0 {
                configuration.summary.finishedConnections = n
            } else {
                throw ValidationError("--keep-connections takes a count or `all`, got \(keep)")
            }
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
    /// The bar this run updated, if any.
    let progress: ProgressBar?
    /// How the report names the capture (the path, or "(standard input)").
    let name: String
    /// What the HTML report needs, gathered in this same pass (nil unless asked for).
    let extras: ReportExtras?

    /// - Parameters:
    ///   - progress: updated every `ProgressBar.frameInterval` frames with the read offset, in `slot`.
    ///   - largeFileLabel: when no bar is given, show one with this label if the capture is large.
    ///   - evidenceAround: collect the HTML report's extras, decoding this many frames on each side of
    ///     an evidence frame (nil: plain analysis, nothing kept).
    init(path: String, name: String? = nil, configuration: RuleConfiguration, progress: ProgressBar? = nil, slot: Int = 0,
         largeFileLabel: String? = nil, evidenceAround: Int? = nil) throws(CaptureError) {
        let file = try CaptureFile(path: path)
        self.file = file
        self.name = name ?? path
        let analyzer = Analyzer(detect: true, configuration: configuration)
        let progress = progress ?? largeFileLabel.flatMap { ProgressBar.forCapture(size: file.info.fileSize, label: $0) }
        self.progress = progress
        // The HTML report's collector wraps the analysis; without it the loop is the plain analysis.
        let collector = evidenceAround.map { EvidenceCollector(analyzer: analyzer, around: $0) }
        if let progress {
            let size = file.info.fileSize
            summary = file.read { frame in
                if let collector { collector.consume(frame) } else { analyzer.consume(frame) }
                if frame.number % ProgressBar.frameInterval == 0 { progress.update(slot: slot, offset: frame.recordOffset, size: size) }
            }
            progress.complete(slot: slot)
        } else if let collector {
            summary = file.read { collector.consume($0) }
        } else {
            summary = file.read { analyzer.consume($0) }
        }
        findings = analyzer.finish()
        extras = collector?.finish(findings: findings, captureEnd: summary.lastTimestamp)
        self.analyzer = analyzer
    }

    var facts: CaptureFacts { CaptureFacts(path: name, info: file.info, summary: summary, analyzer: analyzer) }
}

/// `bleanalyze FILE` (the default command): the report a person reads, as text on the terminal,
/// JSON (`--json`), or a self-contained HTML page (`-o OUT.html`, `--html OUT.html`).
struct Report: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "The report: capture summary, connections and findings (the default command).",
        discussion: """
            Text on stdout by default (coloured on a terminal unless NO_COLOR is set). -o PATH writes the report to a \
            file instead, in the format its extension names: .html (self-contained page with a timeline), .json, \
            anything else text. --html PATH writes the HTML page as well as printing the text.
            """)

    @OptionGroup var capture: CaptureArgument
    @OptionGroup var ruleOptions: RuleOptions
    @Flag(name: .long, help: "One JSON document instead of text (schema: docs/report-schema.json).") var json = false
    @Option(name: [.short, .customLong("output")], help: ArgumentHelp("Write the report to PATH: .html, .json or text by extension.", valueName: "PATH"))
    var output: String?
    @Option(name: .long, help: ArgumentHelp("Also write the self-contained HTML report to PATH.", valueName: "PATH")) var html: String?
    @Option(name: .long, help: "Colour in the text report: auto (a terminal without NO_COLOR), always or never.") var color: String = "auto"
    @Option(name: .long, help: "Frames decoded on each side of an evidence frame in the HTML report.") var around: Int = 3
    @Flag(name: .long, help: "Text report: every instance of every finding and every attempt (default: the first few, counted).")
    var all = false
    @Option(name: .long, help: ArgumentHelp("Only findings about this device: its name or address (and those about the capture as a whole).", valueName: "NAME|ADDR"))
    var peer: String?

    enum Format { case text, json, html }

    func validate() throws {
        guard ["auto", "always", "never"].contains(color) else { throw ValidationError("--color takes auto, always or never, not \(color)") }
        guard (0...50).contains(around) else { throw ValidationError("--around takes 0 to 50 frames") }
    }

    /// The format of `-o PATH`: `--json` wins, else the extension.
    var outputFormat: Format {
        if json { return .json }
        let ext = output?.split(separator: ".").last?.lowercased() ?? ""
        return ext == "html" || ext == "htm" ? .html : ext == "json" ? .json : .text
    }

    func run() throws {
        var configuration = try ruleOptions.configuration()
        let name = capture.name
        let format = output == nil ? (json ? .json : .text) : outputFormat
        let htmlPaths = [html, format == .html ? output : nil].compactMap { $0 }
        // The page counts every connection by peer and charts them: it keeps them whole unless told.
        if !htmlPaths.isEmpty, ruleOptions.keepConnections == nil { configuration.summary.finishedConnections = nil }
        let run = try capture.exitOnError { path throws(CaptureError) in
            try DetectionRun(path: path, name: name, configuration: configuration, largeFileLabel: "reading " + name,
                             evidenceAround: htmlPaths.isEmpty ? nil : around)
        }
        let progress = run.progress
        defer { progress?.finish() }
        let model = run.analyzer.session
        var findings = run.findings
        if let peer {
            let scope = PeerScope(peer)
            if !scope.seen(in: model) {
                progress?.finish()
                Diagnostics.warn("\(name): \(peer) is not in this capture (no connection to it, no advertising from it)")
                throw ExitCode(ExitCodes.badInput)
            }
            findings = findings.filter { scope.matches($0, model) }
        }
        if let extras = run.extras {
            // The page from the one pass: the capture is not read again.
            let page = HTMLReport.render(run.facts, model: model, findings: findings, extras: extras)
            for path in Set(htmlPaths).sorted() { try write(page, to: path) }
        }
        progress?.finish()
        if format == .json, output == nil {
            // Bytes straight to stdout: no String made of the whole document.
            var out = Output()
            ReportJSON.write(run.facts, model: model, findings: findings) { out.write($0) }
            out.write("\n")
            out.flush()
        } else if format != .html {
            let text: String
            switch format {
            case .json: text = ReportJSON.render(run.facts, model: model, findings: findings) + "\n"
            default:
                let style: TerminalStyle
                switch color {
                case "always": style = TerminalStyle(colour: true, width: output == nil ? TerminalStyle.detect().width : TerminalStyle.defaultWidth)
                case "never": style = TerminalStyle(colour: false, width: output == nil ? TerminalStyle.detect().width : TerminalStyle.defaultWidth)
                default: style = output == nil ? TerminalStyle.detect() : .plain
                }
                text = ReportText.render(run.facts, model: model, findings: findings, style: style, all: all)
            }
            if let output { try write(text, to: output) } else {
                var out = Output()
                out.write(text)
                out.flush()
            }
        }
        for issue in run.summary.issues { Diagnostics.warn("\(capture.name): \(issue)") }
        // The process ends after this command: the session's object graph (thousands of connections,
        // their databases and timelines) is left to the OS instead of being freed one object at a
        // time, which took ~4 % of the analysis of a capture of 3000 short links.
        _ = Unmanaged.passRetained(run.analyzer)
    }

    func write(_ text: String, to path: String) throws {
        do { try text.write(to: path) } catch {
            Diagnostics.warn("cannot write \(path)")
            throw ExitCode(ExitCodes.badInput)
        }
    }
}
