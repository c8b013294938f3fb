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
public final class Analyzer {
    public private(set) var statistics = CaptureStatistics()
    public private(set) var adapters: [UInt16: AdapterInfo] = [:]
    /// The verdict on the frame last consumed (for `packets`, which prints it).
    public private(set) var lastStatus: FrameStatus = .ok

    public init() {}

    /// Consumes one frame. Frames must come in file order.
    public func consume(_ frame: Frame) {
        statistics.perKind[Int(frame.kind.rawValue)] &+= 1   // safe: a count of frames
        if frame.isCaptureTruncated { statistics.captureTruncated &+= 1 }
        if adapters[frame.adapter] == nil { adapters[frame.adapter] = AdapterInfo(index: frame.adapter) }
        var status = FrameStatus.ok
        if let problem = frame.problem {
            status = .record(problem, frame: frame)
        } else if let type = frame.kind.hciPacketType {
            if let error = HCIValidation.check(type, frame.payload, base: frame.payloadOffset,
                                               captureTruncated: frame.isCaptureTruncated) {
                status = .decode(error)
            }
        } else {
            noteLogRecord(frame)
        }
        lastStatus = status
        if case let .malformed(reason, offset) = status {
            statistics.malformed &+= 1
            if statistics.malformedExamples.count < CaptureStatistics.maxExamples {
                statistics.malformedExamples.append((frame.number, reason, offset))
            }
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
        default:
            break
        }
    }
}

extension AdapterInfo {
    mutating func apply(_ layer: Layer) {
        for f in layer.fields {
            switch (f.nameString, f.value) {
            case let ("Address", .address(a, _)): address = a.description
            case let ("Name", .text(t)): name = t
            case let ("Bus", .integer(v, .named(_, table))): bus = table.name(v)
            case let ("Manufacturer", .integer(v, .named(_, table))): manufacturer = table.name(v) ?? "0x\(String(v, radix: 16))"
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
