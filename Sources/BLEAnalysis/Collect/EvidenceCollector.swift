import BLEBytes
import BLECapture
import BLEProtocol

/// Gathers what the HTML report needs (`ReportExtras`, and each connection's `activity` series)
/// during the one analysis pass, so the capture is read once (and `bleanalyze report - -o x.html`
/// works from a pipe like a file). The analysis decides what is kept; the report only says how a
/// frame is written (`format`; BLEReport's `EvidenceCollector(analyzer:around:)` gives `packets`' text).
///
/// ```swift
/// let analyzer = Analyzer(detect: true)
/// let collector = EvidenceCollector(analyzer: analyzer)   // BLEReport's convenience init
/// let summary = capture.read { collector.consume($0) }   // instead of analyzer.consume
/// let findings = analyzer.finish()
/// let extras = collector.finish(findings: findings, captureEnd: summary.lastTimestamp)
/// ```
///
/// Evidence windows: the last `RecentFrames` frames are kept (reused storage, with each completed
/// L2CAP PDU and its display context). When the detectors' findings grow after a frame, the frames
/// around each new finding's evidence frames are decoded from that ring, and the frames after it
/// are decoded as they arrive. Findings added at the end (`Detector.finish`: requests never
/// answered, aggregated rules) cite frames that may be long gone: see `NotableFrames`.
///
/// The pass is single-threaded and the PDU body never re-enters `consume`: stored properties skip the
/// runtime exclusivity checks (as `Analyzer`'s do), which showed in the profile of a large report.
public final class EvidenceCollector {
    /// A frame written for the report: the frame, its decoded layers and its status.
    public typealias FrameFormatter = (Frame, [Layer], FrameStatus) -> String

    /// Evidence frames per finding around which frames are decoded (the first ones, which the
    /// detectors list most telling first).
    static let maxFramesPerFinding = 4
    /// Decoded frames kept (`maxDecoded`'s default). Over this, windows are dropped by rank (every
    /// finding's 4th window before anyone's 3rd, …), never a finding's first: each finding keeps its
    /// fair share, however many findings came before it. (The former second pass decoded up to
    /// 3000 frames in severity order, so the first findings could leave nothing for the others.)
    public static let maxDecodedFrames = 3000
    /// Frames kept behind the newest: a finding usually cites frames close to the one that
    /// decided it (a response late by 30 s cites its request: such windows may be cut).
    static let ringCapacity = 512

    let analyzer: Analyzer
    let around: Int
    let maxDecoded: Int
    @exclusivity(unchecked) private var recent: RecentFrames
    @exclusivity(unchecked) private var notable: NotableFrames
    /// Writes a frame as the report shows it (BLEReport gives `packets`' btmon-style text).
    private let format: FrameFormatter

    @exclusivity(unchecked) private var extras = ReportExtras()
    @exclusivity(unchecked) private var series = SeriesCollector()
    /// Decoded frames by number, with the best (lowest) rank of a window that wants each.
    @exclusivity(unchecked) private var decoded: [Int: (frame: ReportExtras.DecodedFrame, rank: Int)] = [:]
    /// How many of `decoded` have each rank (so a trim with nothing to drop costs nothing).
    @exclusivity(unchecked) private var perRank = [Int](repeating: 0, count: EvidenceCollector.maxFramesPerFinding)
    /// Windows still open ahead of the pass: frames decoded as they arrive.
    @exclusivity(unchecked) private var ahead: [(range: ClosedRange<Int>, rank: Int)] = []
    @exclusivity(unchecked) private var findingsSeen = 0
    /// Frames of windows not decoded because the first windows alone filled twice `maxDecoded`.
    @exclusivity(unchecked) public private(set) var droppedFrames = 0

    // The frame being consumed, for its PDU.
    @exclusivity(unchecked) private var current = 0
    @exclusivity(unchecked) private var decodeNow: Int?
    @exclusivity(unchecked) private var upper: [Layer] = []
    /// The current frame carried an ATT PDU end-of-pass rules cite (`NotableFrames`).
    @exclusivity(unchecked) private var notableNow = false

    /// Discovery responses, which add to the server's GATT database (Core v5.4 Vol 3 Part G 4.4–4.7).
    static let changesDatabase: Set<ATTOpcode> = [.findInformationResponse, .findByTypeValueResponse,
                                                  .readByTypeResponse, .readByGroupTypeResponse]

    /// - Parameters:
    ///   - around: frames decoded on each side of an evidence frame (0…50).
    ///   - maxDecoded: decoded frames kept, first windows of all findings first. During the pass at
    ///     most twice this many are held; past that (first windows only) new windows are not decoded.
    ///   - format: how a decoded frame is written (its layers, upper ones decoded as the PDU completed).
    public init(analyzer: Analyzer, around: Int = 3, maxDecoded: Int = EvidenceCollector.maxDecodedFrames, format: @escaping FrameFormatter) {
        self.analyzer = analyzer
        self.format = format
        analyzer.session.recordsActivity = true   // the charts' series
        analyzer.session.radio = RadioTracker()   // scanning and advertising periods
        self.maxDecoded = max(1, maxDecoded)
        self.around = max(0, min(around, 50))
        extras.around = self.around
        recent = RecentFrames(capacity: max(Self.ringCapacity, 2 * self.around + 1))
        notable = NotableFrames(around: self.around)
        analyzer.engine?.movedObservers.append { [unowned self] moves in self.findingsSeen = moves(self.findingsSeen) }
    }

    /// Consumes one frame: the analysis, then what the report keeps of it.
    public func consume(_ frame: Frame) {
        current = frame.number
        decodeNow = rankAhead(frame.number)
        upper.removeAll(keepingCapacity: true)
        notableNow = false
        recent.push(frame)
        let status = analyzer.consume(frame) { pdu in self.pdu(pdu) }.status
        recent.setStatus(status)
        if let rank = decodeNow {
            // Decoded as the frame goes by, with the upper layers decoded as the PDU completed: exactly as `packets`.
            keep(.init(number: frame.number, time: frame.timestamp, text: format(frame, FrameLayers.decode(frame) + upper, status)), rank: rank)
        }
        notable.frame(frame, status: status, attNotable: notableNow, recent: recent)
        if let engine = analyzer.engine, engine.findings.count > findingsSeen {
            for f in engine.findings[findingsSeen...] { schedule(f) }
            findingsSeen = engine.findings.count
        }
        // After the findings: a link closed by this frame is ranked with the findings it gave.
        series.frame(frame, session: analyzer.session)
    }

    /// A complete L2CAP PDU, handed over before the session acts on it.
    private func pdu(_ completed: CompletedPDU) {
        let pdu = completed.bytes, c = completed.connection, received = completed.received
        recent.addPDU(pdu, c, received: received)
        let opcode = completed.attOpcode
        if let opcode, Self.changesDatabase.contains(opcode) {
            // The session is about to add what this response discovered to a GATT database: the frames
            // a window may still want are decoded now, as `packets` shows them (names known so far).
            // Deeper frames are decoded with the database as it is when a finding wants them (a
            // handle may then be named that was not known yet).
            recent.freeze(depth: 2 * around + 1)
        }
        switch opcode {
        case .handleValueIndication?, .errorResponse?:
            notableNow = true
        case .handleValueNotification?:
            // The first value of a handle on this link (`gatt.unsubscribed-notification` may cite it at the end).
            if let h = ATT.peekHandle(pdu, opcodeAt: L2CAP.basicHeaderLength), c.valueStreams[h] == nil {
                notableNow = true
            }
        case .writeRequest?:
            // A CCCD write and its answer (`gatt.subscription-silent` decides at the end).
            if let h = ATT.peekHandle(pdu, opcodeAt: L2CAP.basicHeaderLength),
               c.gatt(serverIsHost: received)?.looksLikeCCCD(h) == true { notableNow = true }
        case .writeResponse?:
            if let h = c.att.outstanding(from: received ? .host : .peer)?.handle,
               c.gatt(serverIsHost: !received)?.looksLikeCCCD(h) == true { notableNow = true }
        default:
            break
        }
        // SMP: a pairing's steps (`security.pairing-timeout` and `security.legacy-pairing` decide at the end).
        if completed.smp != nil { notableNow = true }
        if decodeNow != nil {
            var copy = pdu
            c.displayLayers(&copy, received: received, into: &upper)
        }
    }

    /// Ends the pass: the windows of the findings added at the end, then the extras.
    /// - Parameter findings: `Analyzer.finish()`'s findings (the engine's, ordered).
    public func finish(findings: [Finding], captureEnd: Int64?) -> ReportExtras {
        if let engine = analyzer.engine, engine.findings.count > findingsSeen {
            for f in engine.findings[findingsSeen...] { schedule(f) }
            findingsSeen = engine.findings.count
        }
        ahead.removeAll()
        trim(to: maxDecoded)
        if decoded.count > maxDecoded { keepKeyWindows(of: findings) }
        extras.frames = decoded.values.map(\.frame).sorted { $0.number < $1.number }
        decoded.removeAll()
        var counts: [Int: [Severity: Int]] = [:]
        for f in findings { if let c = f.connectionIndex { counts[c, default: [:]][f.severity, default: 0] += 1 } }
        series.finish(model: analyzer.session, end: captureEnd ?? 0, finalFindings: counts, into: &extras)
        return extras
    }

    // MARK: Windows

    /// Decodes the frames around `f`'s first evidence frames that are still kept, and schedules the
    /// frames after them; notes the time and ATT value of every evidence frame.
    private func schedule(_ f: Finding) {
        series.noteFinding(f)
        for n in f.frames where extras.frameTimes[n] == nil {
            guard let k = kept(n) else { continue }
            extras.frameTimes[n] = k.timestamp
            if let v = k.value() { extras.values[n] = v }
        }
        for (rank, centre) in f.frames.prefix(Self.maxFramesPerFinding).enumerated() {
            let window = max(1, centre - around) ... centre + around
            for n in window where n <= current {
                if let d = decoded[n] {
                    if rank < d.rank { keep(d.frame, rank: rank) }
                } else if let k = kept(n) {
                    if makeRoom() { keep(decode(k), rank: rank) } else { droppedFrames += 1 }
                }
            }
            if window.upperBound > current { ahead.append((max(current + 1, window.lowerBound) ... window.upperBound, rank)) }
        }
    }

    /// A frame still held: in the ring of recent frames, or kept as notable.
    private func kept(_ n: Int) -> KeptFrame? { recent.frame(n) ?? notable.frame(n) }

    /// The best rank of the windows ahead that want frame `n` (nil: none); drops passed windows.
    private func rankAhead(_ n: Int) -> Int? {
        guard !ahead.isEmpty else { return nil }
        ahead.removeAll { $0.range.upperBound < n }
        var best: Int? = nil
        for w in ahead where w.range.contains(n) { best = min(best ?? w.rank, w.rank) }
        return best
    }

    private func decode(_ k: KeptFrame) -> ReportExtras.DecodedFrame {
        let s = k.withFrame { frame in format(frame, FrameLayers.decode(frame) + k.upperLayers(), k.status) }
        return .init(number: k.number, time: k.timestamp, text: s)
    }

    private func keep(_ frame: ReportExtras.DecodedFrame, rank: Int) {
        if let d = decoded[frame.number] {
            if d.rank > rank {
                decoded[frame.number]?.rank = rank
                perRank[d.rank] -= 1
                perRank[rank] += 1
            }
            return
        }
        guard makeRoom() else { droppedFrames += 1; return }
        decoded[frame.number] = (frame, rank)
        perRank[rank] += 1
    }

    /// True when one more frame may be held: under twice `maxDecoded`, after dropping later windows
    /// down to `maxDecoded` if needed.
    private func makeRoom() -> Bool {
        if decoded.count >= 2 * maxDecoded { trim(to: maxDecoded) }
        return decoded.count < 2 * maxDecoded
    }

    /// Drops the frames of the highest-ranked windows until at most `limit` remain (first windows stay).
    private func trim(to limit: Int) {
        var rank = Self.maxFramesPerFinding - 1
        while decoded.count > limit && rank > 0 {
            if perRank[rank] > 0 {
                decoded = decoded.filter { $0.value.rank != rank }
                perRank[rank] = 0
            }
            rank -= 1
        }
    }

    /// More first windows than `maxDecoded` frames: those of the findings the report lists first
    /// (errors, then warnings, …, each by time) until the budget is spent.
    private func keepKeyWindows(of findings: [Finding]) {
        var chosen = Set<Int>()
        for f in findings {
            guard let centre = f.frames.first else { continue }
            let window = (max(1, centre - around) ... centre + around).filter { decoded[$0] != nil && !chosen.contains($0) }
            if chosen.count + window.count > maxDecoded { break }
            chosen.formUnion(window)
        }
        droppedFrames += decoded.count - chosen.count
        decoded = decoded.filter { chosen.contains($0.key) }
    }
}
