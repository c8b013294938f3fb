import BLECapture
import BLEProtocol
import BLEAnalysis

/// Frames kept beyond the ring of recent frames, for the findings detectors add at the end of the
/// pass (`Detector.finish`), which may cite frames long gone: aggregated rules (`pool.page-timeouts`
/// cites its failed attempts, `link.disconnect-summary` the disconnections, `adv.oversize` the first
/// bad report of each advertiser) and what was still open (an indication never confirmed).
///
/// Which frames? Asking the detectors what they will cite would tie the report to each rule's
/// internals; instead a frame is *notable* when the session's typed view of it says something
/// went wrong or ended, which is what end-of-pass rules cite:
/// - the analysis found it malformed (bad advertising data included: `adv.oversize`);
/// - an HCI event that ends a link or reports a failure: Disconnection Complete, and (Enhanced)
///   Connection Complete or Command Status with a non-zero Status;
/// - an ATT Handle Value Indication (`att.indication-unconfirmed` decides at the end).
/// The first `maxCentres` notable frames are kept with `around` frames on each side (rules that
/// aggregate cite their first instances); later ones are counted in `dropped`.
/// Not covered: an ATT request still unanswered at the end (`att.timeout`, `att.unanswered`) when
/// it left the ring, i.e. more than `EvidenceCollector.ringCapacity` frames before the decision.
struct NotableFrames {
    let around: Int
    static let maxCentres = 256
    private(set) var centres = 0
    private(set) var dropped = 0
    private var kept: [Int: KeptFrame] = [:]
    /// Frames up to this number follow a notable frame and are kept as they arrive.
    private var keepUntil = 0

    init(around: Int) { self.around = around }

    func frame(_ n: Int) -> KeptFrame? { kept[n] }

    /// After the analysis consumed `frame` (kept as the newest of `recent`).
    mutating func frame(_ frame: Frame, status: FrameStatus, indication: Bool, recent: RecentFrames) {
        if frame.number <= keepUntil, kept[frame.number] == nil, let k = recent.frame(frame.number) { kept[frame.number] = k }
        guard status.isMalformed || indication || Self.isNotableEvent(frame) else { return }
        guard centres < Self.maxCentres else { dropped += 1; return }
        centres += 1
        for n in max(1, frame.number - around) ... frame.number where kept[n] == nil {
            if let k = recent.frame(n) { kept[n] = k }
        }
        keepUntil = max(keepUntil, frame.number + around)
    }

    /// Disconnection Complete, or a failure Status in Connection Complete, Command Status or LE
    /// (Enhanced) Connection Complete: Status is the first parameter after the 2-byte event header
    /// (Core v5.4 Vol 4 Part E 7.7.3, 7.7.5, 7.7.15), after the subevent code in LE Meta events
    /// (7.7.65.1, 7.7.65.10).
    static func isNotableEvent(_ frame: Frame) -> Bool {
        guard frame.kind == .event, frame.payload.count >= 3 else { return false }
        let p = frame.payload
        switch p[0] {
        case HCIEventCode.disconnectionComplete: return true
        case HCIEventCode.connectionComplete, HCIEventCode.commandStatus: return p[2] != 0
        case HCIEventCode.leMeta:
            guard p.count >= 4, p[2] == LESubevent.connectionComplete || p[2] == LESubevent.enhancedConnectionComplete else { return false }
            return p[3] != 0
        default: return false
        }
    }
}
