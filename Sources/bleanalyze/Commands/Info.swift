import ArgumentParser
import BLEAnalysis
import BLECapture
import BLEReport

/// `bleanalyze info FILE`: format, datalink, frame count, time span, adapters, counts per packet type.
struct Info: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Describe a capture: format, datalink, frames, time span, adapters, packet types.")

    @OptionGroup var capture: CaptureArgument
    @Flag(name: .long, help: "One JSON object instead of text.") var json = false

    func run() throws {
        let file = try capture.open()
        let analyzer = Analyzer()
        let summary = file.read { frame in analyzer.consume(frame) }
        let facts = CaptureFacts(path: capture.name, info: file.info, summary: summary, analyzer: analyzer)
        var out = Output()
        out.write(json ? InfoRenderer.json(facts) + "\n" : InfoRenderer.text(facts))
        out.flush()
        for issue in summary.issues { Diagnostics.warn("\(capture.name): \(issue)") }
    }
}
