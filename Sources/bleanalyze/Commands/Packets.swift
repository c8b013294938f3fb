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
        // Each frame's layers are built in one array: HCI first, then what the session adds
        // (L2CAP and above, once a PDU is complete), and the array is handed on whole.
        var layers: [Layer] = []
        var received = false
        analyzer.session.onL2CAPPDU = { pdu, connection in
            connection.displayLayers(&pdu, received: received, into: &layers)
        }
        out.flush()
        // Text is rendered on a second thread; JSON Lines stay on this one.
        let pipeline = json ? nil : RenderPipeline(text: text)
        // A frame's own layer is stateless. Without a filter to read it here, the rendering thread
        // decodes those of every frame but ACL data (the ACL header is cheap, the L2CAP and ATT
        // layers above it need the session): that splits the work between the threads about evenly.
        let splitDecoding = pipeline != nil && !filter.active
        // Vendor commands are named by the maker the controller reported earlier: those frames
        // (few) are decoded here, where that is known.
        var vendors = ControllerVendors()
        let summary = file.read { frame in
            layers = []
            layers.reserveCapacity(4)
            received = frame.direction == .received
            let air = frame.kind == .airLE
            vendors.observe(frame)
            let vendor = vendors.vendor(for: frame)
            let decodeThere = splitDecoding && !air && frame.kind != .aclData && vendor == nil
            if !air && !decodeThere { FrameLayers.decode(frame, vendor: vendor, into: &layers) }   // before the session moves on
            analyzer.consume(frame)
            if air { layers.insert(contentsOf: analyzer.airLayers(frame), at: 0) }
            guard filter.accepts(frame, layers: layers, session: analyzer.session) else { return }
            if let pipeline {
                pipeline.add(frame, layers: layers, decodeHCI: decodeThere, status: analyzer.lastStatus)
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
        let seconds = Double(max(0, (summary.lastTimestamp ?? 0) - (summary.firstTimestamp ?? 0))) / 1e6
        if let reason = filter.emptyResultReason(frames: summary.frames, seconds: seconds, session: analyzer.session) {
            Diagnostics.warn("\(capture.file): nothing to print: \(reason)")
            throw ExitCode(ExitCodes.badInput)
        }
    }
}
