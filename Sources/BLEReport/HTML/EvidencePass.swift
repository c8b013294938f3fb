import BLEBytes
import BLECapture
import BLEProtocol
import BLEAnalysis

/// The second pass for the HTML report: the file is memory-mapped, so reading it again is cheap.
/// Frames within ±`around` of evidence frames are decoded as `packets` shows them (HCI through
/// the tables, upper layers through the session's `onL2CAPPDU` hook with GATT names); the rest
/// only feeds a detector-less `Analyzer` so buffers, names and context are right.
public enum EvidencePass {
    /// Findings whose first `maxFramesPerFinding` frames are decoded (the first ones, which are the
    /// most severe); of the others, the key frame.
    static let maxFindings = 80
    /// Evidence frames per finding around which frames are decoded.
    static let maxFramesPerFinding = 4
    static let maxDecodedFrames = 3000

    /// - Parameter progress: called every 65,536 frames with (record offset, file size).
    public static func run(path: String, model: SessionModel, findings: [Finding], captureEnd: Int64?,
                           around: Int = 3, progress: ((Int, Int) -> Void)? = nil) throws(CaptureError) -> ReportExtras {
        let file = try CaptureFile(path: path)
        let fileSize = file.info.fileSize
        var extras = ReportExtras()
        extras.around = max(0, min(around, 50))
        let windows = frameWindows(findings, around: extras.around)
        var evidence = Set<Int>()
        for f in findings { evidence.formUnion(f.frames) }
        let end = captureEnd ?? 0
        var series: [Int: BufferSeries] = [:]
        for c in model.connections {
            guard let start = c.barStart else { continue }
            series[c.index] = BufferSeries(start: start, end: c.disconnectTime ?? max(end, c.lastDataTime ?? start))
        }

        let analyzer = Analyzer()
        let text = PacketText(options: RenderOptions(), width: 100)
        var upper: [Layer] = []
        var received = false
        var decodeUpper = false
        var current = 0
        var currentTime: Int64 = 0
        analyzer.session.onL2CAPPDU = { pdu, connection in
            if evidence.contains(current), let v = value(pdu, mtu: connection.att.mtu) { extras.values[current] = v }
            if pdu.peekU8(at: 2) == 0x04, pdu.peekU8(at: 3) == 0, let op = pdu.peekU8(at: 4) {
                if op == 0x1B || op == 0x1D { extras.traffic[connection.index, default: .init()].values.add(currentTime) }
                if op == 0x12 || op == 0x52 { extras.traffic[connection.index, default: .init()].writes.add(currentTime) }
            }
            guard decodeUpper else { return }
            upper += connection.displayLayers(&pdu, received: received)
        }
        var radio = RadioTracker()
        var window = 0
        var reportsSeen = 0
        var decoded = 0
        _ = file.read { frame in
            current = frame.number
            currentTime = frame.timestamp
            while window < windows.count && windows[window].upperBound < frame.number { window += 1 }
            decodeUpper = window < windows.count && windows[window].contains(frame.number) && decoded < maxDecodedFrames
            upper.removeAll(keepingCapacity: true)
            received = frame.direction == .received
            analyzer.consume(frame)
            if evidence.contains(frame.number) { extras.frameTimes[frame.number] = frame.timestamp }
            if decodeUpper {
                var s = ""
                text.render(frame, layers: FrameLayers.decode(frame) + upper, status: analyzer.lastStatus, into: &s)
                extras.frames.append(.init(number: frame.number, time: frame.timestamp, text: s))
                decoded += 1
            }
            switch frame.kind {
            case .aclData:
                sampleBuffers(analyzer.session, time: frame.timestamp, into: &series)
                if frame.payload.count >= 2 {
                    let handle = (UInt16(frame.payload[0]) | UInt16(frame.payload[1]) << 8) & 0x0FFF
                    if let c = analyzer.session.live[LinkKey(adapter: frame.adapter, handle: handle)] {
                        if frame.direction == .received { extras.traffic[c.index, default: .init()].received.add(frame.timestamp) }
                        else { extras.traffic[c.index, default: .init()].sent.add(frame.timestamp) }
                    }
                }
            case .event:
                let code = frame.payload.first ?? 0
                if code == 0x13 || code == 0x05 { sampleBuffers(analyzer.session, time: frame.timestamp, into: &series) }
                if code == 0x3E || code == 0x2F || code == 0x02 || code == 0x22 {
                    let total = analyzer.session.advertisers.totalReports
                    while reportsSeen < total { extras.advertisingReports.add(frame.timestamp); reportsSeen += 1 }
                }
            case .command:
                radio.command(frame)
            default:
                break
            }
            if let progress, frame.number & 0xFFFF == 0 { progress(frame.recordOffset, fileSize) }
        }
        for c in model.connections {
            series[c.index]?.capacity = c.activity.capacity
        }
        extras.buffers = series
        extras.radio = radio.finish(end: end)
        return extras
    }

    /// Sorted, merged frame ranges around the evidence frames of the first findings.
    static func frameWindows(_ findings: [Finding], around: Int) -> [ClosedRange<Int>] {
        var centres: [Int] = []
        // Every finding's key frame, so each finding links to its decoded evidence; more frames of the first ones.
        for (i, f) in findings.enumerated() { centres += f.frames.prefix(i < maxFindings ? maxFramesPerFinding : 1) }
        var ranges: [ClosedRange<Int>] = []
        for c in Set(centres).sorted() {
            let r = max(1, c - around) ... c + around
            if let last = ranges.last, r.lowerBound <= last.upperBound + 1 {
                ranges[ranges.count - 1] = last.lowerBound ... max(last.upperBound, r.upperBound)
            } else {
                ranges.append(r)
            }
        }
        return ranges
    }

    static func sampleBuffers(_ session: SessionModel, time: Int64, into series: inout [Int: BufferSeries]) {
        for c in session.live.values {
            series[c.index]?.record(time, link: c.buffersInFlight, pool: session.flow.inUse(isLE: c.isLE))
        }
    }

    /// The value of an ATT Read (Blob) Response, notification, indication or write in an L2CAP PDU
    /// (4-byte basic header, fixed ATT channel 0x0004).
    static func value(_ pdu: ByteReader, mtu: Int) -> ReportExtras.CapturedValue? {
        guard pdu.peekU8(at: 2) == 0x04, pdu.peekU8(at: 3) == 0, let op = pdu.peekU8(at: 4) else { return nil }
        let start: Int
        switch op {
        case 0x0B, 0x0D: start = 5
        case 0x1B, 0x1D, 0x12, 0x52: start = 7
        default: return nil
        }
        let length = max(0, pdu.remaining - start)
        var bytes: [UInt8] = []
        var i = start
        while i < pdu.remaining && bytes.count < 64, let b = pdu.peekU8(at: i) {
            bytes.append(b)
            i += 1
        }
        return .init(opcode: op, length: length, bytes: bytes, mtu: mtu)
    }
}

/// Scanning and advertising periods from the host's enable commands (Core v5.4 Vol 4 Part E
/// 7.8.9 / 7.8.11 / 7.8.56 / 7.8.65): the first parameter byte is Enable.
struct RadioTracker {
    private var open: [String: ReportExtras.RadioPeriod] = [:]
    private var done: [ReportExtras.RadioPeriod] = []
    static let maxPeriods = 2000

    mutating func command(_ frame: Frame) {
        let p = frame.payload
        guard p.count >= 4 else { return }
        let opcode = UInt16(p[0]) | UInt16(p[1]) << 8
        let kind: ReportExtras.RadioPeriod.Kind
        switch opcode {
        case 0x200C, 0x2042: kind = .scanning
        case 0x200A, 0x2039: kind = .advertising
        default: return
        }
        let key = "\(kind.rawValue)/\(frame.adapter)"
        if p[3] != 0 {
            if open[key] == nil {
                open[key] = .init(kind: kind, adapter: frame.adapter, start: frame.timestamp, end: frame.timestamp, frame: frame.number)
            }
        } else if var period = open.removeValue(forKey: key), done.count < Self.maxPeriods {
            period.end = frame.timestamp
            done.append(period)
        }
    }

    mutating func finish(end: Int64) -> [ReportExtras.RadioPeriod] {
        for key in open.keys.sorted() {
            guard var period = open[key] else { continue }
            period.end = max(end, period.start)
            done.append(period)
        }
        open.removeAll()
        return done.sorted { ($0.start, $0.kind.rawValue) < ($1.start, $1.kind.rawValue) }
    }
}
