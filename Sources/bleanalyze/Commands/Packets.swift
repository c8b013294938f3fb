import ArgumentParser
import BLEAnalysis
import BLECapture
import BLEProtocol
import BLEReport

/// `bleanalyze packets FILE`: the decoded packet list, btmon-style, or JSON Lines with `--json`.
struct Packets: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print every frame decoded, like btmon (or one JSON object per frame with --json).")

    @OptionGroup var capture: CaptureArgument
    @Flag(name: .long, help: "JSON Lines: one object per frame.") var json = false
    @Flag(name: .long, help: "Print key material (LTK, IRK, SMP values) in full instead of shortened.") var showKeys = false
    @OptionGroup var filters: PacketFilterOptions

    func run() throws {
        var filter = try PacketFilter(filters)
        let file = try capture.open()
        let analyzer = Analyzer()
        let options = RenderOptions(showKeys: showKeys)
        let text = PacketText(options: options, width: Diagnostics.terminalWidth())
        let jsonRenderer = PacketJSON(options: options)
        var out = Output()
        let json = json   // read once: property-wrapper getters are slow per frame
        if let reason = file.info.notDecodedReason, !json { out.line("= \(reason)") }
        var upper: [Layer] = []
        var received = false
        analyzer.session.onL2CAPPDU = { pdu, connection in
            upper += connection.displayLayers(&pdu, received: received)
        }
        out.flush()
        // Text is rendered on a second thread; JSON Lines stay on this one.
        let pipeline = json ? nil : RenderPipeline(text: text)
        let summary = file.read { frame in
            upper.removeAll(keepingCapacity: true)
            received = frame.direction == .received
            analyzer.consume(frame)
            let layers = (frame.kind == .airLE ? analyzer.airLayers(frame) : FrameLayers.decode(frame)) + upper
            guard filter.accepts(frame, layers: layers, session: analyzer.session) else { return }
            if let pipeline {
                pipeline.add(frame, layers: layers, status: analyzer.lastStatus)
            } else {
                out.line(jsonRenderer.render(frame, layers: layers, status: analyzer.lastStatus))
            }
        }
        pipeline?.finish()
        for issue in summary.issues {
            if json {
                var w = JSONWriter()
                w.beginObject()
                w.string("issue", issue.description)
                w.int("frame", issue.frameNumber)
                w.int("offset", issue.offset)
                w.endObject()
                out.line(w.output)
            } else {
                out.line("* \(issue)")
            }
        }
        out.flush()
        for issue in summary.issues { Diagnostics.warn("\(capture.file): \(issue)") }
    }
}
