import ArgumentParser
import BLEAnalysis
import BLECapture
import BLEReport

/// `bleanalyze FILE` (the default command): the report a person reads.
struct Report: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "The report: capture summary, connections and findings (the default command).")

    @OptionGroup var capture: CaptureArgument
    @Flag(name: .long, help: "One JSON document instead of text.") var json = false

    func run() throws {
        let file = try capture.open()
        let analyzer = Analyzer()
        let summary = file.read { frame in analyzer.consume(frame) }
        let facts = CaptureFacts(path: capture.file, info: file.info, summary: summary, analyzer: analyzer)
        var out = Output()
        out.write(json ? InfoRenderer.json(facts) + "\n" : InfoRenderer.text(facts))
        out.flush()
    }
}
