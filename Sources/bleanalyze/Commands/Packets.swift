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
    @Flag(name: [.customShort("t"), .long], help: "Times as seconds since the capture's first frame (what --since/--until count), title lines fitted to 80 columns.")
    var relative = false
    @Option(name: .long, help: "Colour the title lines by direction: auto (a terminal without NO_COLOR), always or never.")
    var color: String = "auto"
    @OptionGroup var filters: PacketFilterOptions

    func validate() throws {
        guard ["auto", "always", "never"].contains(color) else { throw ValidationError("--color takes auto, always or never, not \(color)") }
    }

    /// Where title lines end: the terminal's width, or without a terminal 110 columns for dates and
    /// times of day and 80 for relative times (like btmon, one column short of it, so a line never
    /// wraps).
    var titleWidth: Int {
        if let columns = Diagnostics.terminalColumns() { return columns - 1 }
        return relative ? 79 : 110
    }

    func run() throws {
        var filter = try PacketFilter(filters)
        let file = try capture.open()
        let analyzer = Analyzer()
        let options = RenderOptions(showKeys: showKeys)
        let colour = color == "always" || (color == "auto" && Diagnostics.stdoutIsTerminal && TerminalStyle.colourAllowed)
        let text = PacketText(options: options, width: titleWidth, colour: colour)
        let jsonRenderer = PacketJSON(options: options)
        var out = Output()
        let json = json   // read once: property-wrapper getters are slow per frame
        if let reason = file.info.notDecodedReason, !json { out.line("= \(reason)") }
        // Each frame's layers are built in one array: HCI first, then the upper layers of the
        // L2CAP PDU the frame completes (handed over by the pass before the session acts on it),
        // and the array is handed on whole.
        var layers: [Layer] = []
        out.flush()
        // Text is rendered on a second thread; JSON Lines stay on this one.
        let pipeline = json ? nil : RenderPipeline(text: text)
        let relative = relative
        var originSet = false
        // A frame's own layer is stateless. Without a filter to read it here, the rendering thread
        // decodes those of every frame but ACL data (the ACL header is cheap, the L2CAP and ATT
        // layers above it need the session): that splits the work between the threads about evenly.
        let splitDecoding = pipeline != nil && !filter.active
        // Vendor commands are named by the maker the controller reported earlier: those frames
        // (few) are decoded here, where that is known.
        var vendors = ControllerVendors()
        let summary = file.read { frame in
            if relative && !originSet { pipeline?.timeOrigin = frame.timestamp; originSet = true }
            layers = []
            layers.reserveCapacity(4)
            let air = frame.kind == .airLE
            vendors.observe(frame)
            let vendor = vendors.vendor(for: frame)
            let decodeThere = splitDecoding && !air && frame.kind != .aclData && vendor == nil
            if !air && !decodeThere { FrameLayers.decode(frame, vendor: vendor, into: &layers) }   // before the session moves on
            let analyzed = analyzer.consume(frame) { pdu in pdu.displayLayers(into: &layers) }
            if air { layers.insert(contentsOf: analyzed.airLayers(), at: 0) }
            guard filter.accepts(analyzed, layers: layers, session: analyzer.session) else { return }
            if let pipeline {
                pipeline.add(frame, layers: layers, decodeHCI: decodeThere, status: analyzed.status)
            } else {
                out.line(jsonRenderer.render(frame, layers: layers, status: analyzed.status))
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
        for issue in summary.issues { Diagnostics.warn("\(capture.name): \(issue)") }
        let seconds = Double(max(0, (summary.lastTimestamp ?? 0) - (summary.firstTimestamp ?? 0))) / 1e6
        if let reason = filter.emptyResultReason(frames: summary.frames, seconds: seconds, session: analyzer.session) {
            Diagnostics.warn("\(capture.name): nothing to print: \(reason)")
            throw ExitCode(ExitCodes.badInput)
        }
    }
}
