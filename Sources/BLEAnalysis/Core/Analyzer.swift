import BLEBytes
import BLECapture
import BLEProtocol

/// The one streaming pass over a capture: every frame is checked, counted and fed to the session
/// model; nothing looks back. Memory is bounded by live state (open connections, outstanding
/// requests), never by the number of frames.
///
/// ```swift
/// let analyzer = Analyzer()
/// let summary = capture.read { frame in analyzer.consume(frame) }
/// ```
///
/// A consumer that needs to know what each frame was (`packets`, redaction, the HTML report, the
/// fuzzer) calls `consume(_:pdu:)` instead: its body gets each L2CAP PDU the frame completes as a
/// `CompletedPDU`, and it returns the frame's `AnalyzedFrame` (verdict, air parse).
public final class Analyzer {
    @exclusivity(unchecked) private var counts = CaptureStatistics()
    public var statistics: CaptureStatistics {
        var s = counts
        s.attOpcodes = session.attOpcodes
        return s
    }
    /// Connections, attempts, GATT databases, advertisers.
    public let session = SessionModel()
    /// Detectors, when this pass looks for problems (the report, `check`).
    public let engine: DetectorEngine?
    /// Summarises old finished connections when the pass detects (`SummaryPolicy`).
    public let retirement: ConnectionRetirement?
    @exclusivity(unchecked) private var lastTimestamp: Int64 = 0
    /// The time of the last frame consumed (µs since the Unix epoch): where the capture is now.
    public var now: Int64 { lastTimestamp }
    @exclusivity(unchecked) private var lastFrameNumber = 0
    @exclusivity(unchecked) private var lastAdapter: UInt16 = 0
    @exclusivity(unchecked) public private(set) var adapters: [UInt16: AdapterInfo] = [:]
    /// Over-the-air captures (pcap link types 251/256/272): LL PDUs turned into synthetic HCI
    /// frames fed to this same pass, plus per-link radio statistics (BLEAnalysis/Air).
    public let air = AirCaptureAdapter()
    /// PacketLogger syslog lines (bluetoothd, CoreBluetooth) put on the connections' timelines.
    public let syslog = SyslogCorrelator()
    /// What PacketLogger's note records say of the recording device (product, OS, chipset).
    @exclusivity(unchecked) public private(set) var hostNotes = HostNotes()

    /// - Parameter detect: feed the detectors (off for `packets`/`info`, which only decode).
    public init(detect: Bool = false, configuration: RuleConfiguration = RuleConfiguration()) {
        engine = detect ? DetectorEngine(model: session, configuration: configuration) : nil
        retirement = detect && configuration.summary.finishedConnections != nil ? ConnectionRetirement(configuration.summary) : nil
        session.engine = engine
    }

    /// The model and the engine refer to each other; the pass that owns both lets them go.
    deinit { session.engine = nil }

    /// Ends the pass and returns the findings, ordered by severity then time.
    public func finish() -> [Finding] {
        air.finish(self)
        if counts.holdsNoHCIEvents {
            session.filteredExport = .hciACLOnly
        } else if air.isFilteredExport {
            session.filteredExport = .airDataOnly
        }
        for c in session.live.values { c.captureEnd = lastTimestamp }
        session.retellDiscovery()
        session.explainEnds(captureEnd: lastTimestamp)
        session.resolvePeerNames()   // timeline, gatt and info name peers as the report does
        var findings = engine?.finish(captureEnd: lastTimestamp, lastFrame: lastFrameNumber) ?? []
        // Put the host's own log lines (PacketLogger syslog) next to the findings they precede.
        if syslog.hasLines {
            for i in findings.indices {
                findings[i].logContext = syslog.context(for: findings[i]).map { entry in
                    let ms = entry.before / 1000
                    return "\(entry.line.process)\(entry.line.category.isEmpty ? "" : " [\(entry.line.category)]"): \(entry.line.message) (\(ms) ms before, frame \(entry.line.frame))"
                }
            }
        }
        return findings
    }

    /// Consumes one frame. Frames must come in file order. (The plain pass: what the frame was is
    /// not built, which the report's loop over millions of frames would pay for.)
    public func consume(_ frame: Frame) {
        _ = take(frame)
    }

    /// Consumes one frame and tells what it was: hands `body` each L2CAP PDU the frame completes,
    /// before the session acts on it (so it reads as it did when it went by: see `CompletedPDU`),
    /// and returns the frame's verdict and air parse. `body` runs inside this call only; it must
    /// not consume frames itself.
    @discardableResult
    public func consume(_ frame: Frame, pdu body: (CompletedPDU) -> Void) -> AnalyzedFrame {
        assert(session.pduBody == nil, "consume(_:pdu:) called from its own body")
        let status = withoutActuallyEscaping(body) { body in
            session.pduBody = body
            defer { session.pduBody = nil }
            return take(frame)
        }
        let isAir = frame.kind == .airLE
        return AnalyzedFrame(frame: frame, status: status, air: isAir ? air.lastParse : nil,
                             airContext: isAir ? air.lastContext : LinkLayerDisplay.Context())
    }

    /// The pass over one frame: counts, checks, feeds the session; returns the verdict.
    @inline(__always)
    private func take(_ frame: Frame) -> FrameStatus {
        if frame.timestamp &- lastTimestamp > counts.largestStep.micros, lastFrameNumber > 0 {
            counts.largestStep = (frame.timestamp &- lastTimestamp, frame.number)
        }
        lastTimestamp = frame.timestamp
        lastFrameNumber = frame.number
        counts.perKind[Int(frame.kind.rawValue)] &+= 1   // safe: a count of frames
        if frame.isCaptureTruncated { counts.captureTruncated &+= 1 }
        if frame.adapter != lastAdapter || adapters.isEmpty {
            lastAdapter = frame.adapter
            if adapters[frame.adapter] == nil { adapters[frame.adapter] = AdapterInfo(index: frame.adapter) }
        }
        var status = FrameStatus.ok
        if let problem = frame.problem {
            status = .record(problem, frame: frame)
        } else if let type = frame.kind.hciPacketType {
            if let error = HCIValidation.check(type, frame.payload, base: frame.payloadOffset,
                                               captureTruncated: frame.isCaptureTruncated) {
                status = .decode(error)
            } else {
                feed(type, frame, &status)
            }
        } else if frame.kind == .airLE {
            air.consume(frame, into: self, status: &status)
        } else {
            if frame.kind == .vendorDiagnostic, FrameKind.h4DiagnosticName(frame.rawType) != nil {
                counts.h4Diagnostics[frame.rawType, default: 0] &+= 1
            }
            noteLogRecord(frame)
        }
        if frame.number & 255 == 0, let retirement, let engine { retirement.check(session, engine, now: lastTimestamp) }
        if case let .malformed(reason, offset) = status {
            counts.malformed &+= 1
            if counts.malformedExamples.count < CaptureStatistics.maxExamples {
                counts.malformedExamples.append((frame.number, reason, offset))
            }
        }
        return status
    }

    /// Typed decoding of a structurally valid HCI packet into the session model.
    func feed(_ type: HCIPacketType, _ frame: Frame, _ status: inout FrameStatus) {
        var r = ByteReader(frame.payload, base: frame.payloadOffset)
        switch type {
        case .command:
            if let opcode = HCIPacketHeader.commandOpcode(r) { session.commandIssued(opcode, frame: frame) }
            if let cmd = try? HCICommand.decode(&r) { session.command(cmd, frame: frame) }
        case .event:
            do {
                session.event(try HCIEvent.decode(&r), frame: frame, status: &status)
            } catch {
                if !frame.isCaptureTruncated { status = .decode(error) }
            }
        case .acl:
            session.acl(frame, status: &status)
        case .sco, .iso:
            break
        }
    }

    /// Adapter facts from BlueZ monitor bookkeeping records.
    private func noteLogRecord(_ frame: Frame) {
        var r = ByteReader(frame.payload, base: frame.payloadOffset)
        switch frame.kind {
        case .indexNew:
            let layer = LogRecords.newIndex(&r)
            adapters[frame.adapter, default: AdapterInfo(index: frame.adapter)].apply(layer)
        case .indexInfo:
            let layer = LogRecords.indexInfo(&r)
            adapters[frame.adapter, default: AdapterInfo(index: frame.adapter)].apply(layer)
        case .syslog:
            syslog.consume(frame, session: session)
        case .note:
            hostNotes.consume(frame.payload)
        default:
            break
        }
    }
}

extension AdapterInfo {
    mutating func apply(_ layer: Layer) {
        for f in layer.fields {
            switch (f.id, f.value) {
            case let (.adapterAddress, .address(a, _)): address = a.description
            case let (.adapterName, .text(t)): name = t
            case let (.adapterBus, .integer(v, .named(_, table))): bus = table.name(v)
            case let (.manufacturer, .integer(v, .named(_, table))): manufacturer = table.name(v) ?? "0x\(String(v, radix: 16))"
            default: break
            }
        }
    }
}

extension FrameKind {
    /// The HCI packet type of an HCI frame kind.
    public var hciPacketType: HCIPacketType? {
        switch self {
        case .command: .command
        case .event: .event
        case .aclData: .acl
        case .scoData: .sco
        case .isoData: .iso
        default: nil
        }
    }
}
