import BLEBytes
import BLECapture
import BLEProtocol

/// Frames kept beyond the ring of recent frames, for the findings detectors add at the end of the
/// pass (`Detector.finish`), which may cite frames long gone: aggregated rules (`pool.page-timeouts`
/// cites its failed attempts, `link.disconnect-summary` the disconnections, `adv.oversize` the first
/// bad report of each advertiser) and what was still open (an indication never confirmed).
///
/// Which frames? Asking the detectors what they will cite would tie the report to each rule's
/// internals; instead a frame is *notable* when the session's typed view of it says something
/// went wrong or ended, which is what end-of-pass rules cite:
/// - the analysis found it malformed (bad advertising data included: `adv.oversize`);
/// - an HCI event that opens or ends a link or reports a failure: (LE, Enhanced) Connection
///   Complete (`pool.concurrent-connections`), Disconnection Complete, Command Status or Command
///   Complete with a non-zero Status (`link.command-refused`);
/// - a command that starts a connection attempt (`pool.page-timeouts`, `pool.cancelled-attempt`);
/// - ATT: an Error Response (`gatt.subscription-failed` cites it and its request), an indication
///   (`att.indication-unconfirmed`), the first notification of a handle on a link
///   (`gatt.unsubscribed-notification`, `mtu.truncated-notification`), a CCCD write and its
///   Write Response (`gatt.subscription-silent`); SMP PDUs (`security.pairing-timeout`,
///   `security.legacy-pairing`).
/// The first `maxCentres` notable frames (within `maxBytes`) are kept with `2 × around` frames
/// before (a request a few frames before its answer is cited with its own window) and `around`
/// after (rules that aggregate cite their first instances); later ones are counted in `dropped`.
/// With these, the report of every capture in captures/ and the real corpus is the same as the
/// former second pass made (docs/ARCHITECTURE.md "The HTML report's evidence").
/// Not covered: an ATT request still unanswered at the end (`att.timeout`, `att.unanswered`) when
/// it left the ring, i.e. more than `EvidenceCollector.ringCapacity` frames before the decision.
struct NotableFrames {
    let around: Int
    static let maxCentres = 1024
    /// Bytes of kept frames and PDUs at most (a hostile capture's frames may all be 64 KiB).
    static let maxBytes = 32 << 20
    private(set) var centres = 0
    private(set) var dropped = 0
    private var kept: [Int: KeptFrame] = [:]
    private var bytes = 0
    /// Frames up to this number follow a notable frame and are kept as they arrive.
    private var keepUntil = 0

    init(around: Int) { self.around = around }

    func frame(_ n: Int) -> KeptFrame? { kept[n] }

    /// After the analysis consumed `frame` (kept as the newest of `recent`).
    /// - Parameter attNotable: the frame carried one of the ATT PDUs above.
    mutating func frame(_ frame: Frame, status: FrameStatus, attNotable: Bool, recent: RecentFrames) {
        if frame.number <= keepUntil { keep(frame.number, from: recent) }
        guard status.isMalformed || attNotable || Self.isNotableEvent(frame) || Self.startsAttempt(frame) else { return }
        guard centres < Self.maxCentres, bytes < Self.maxBytes else { dropped += 1; return }
        centres += 1
        for n in max(1, frame.number - 2 * around) ... frame.number { keep(n, from: recent) }
        keepUntil = max(keepUntil, frame.number + around)
    }

    private mutating func keep(_ n: Int, from recent: RecentFrames) {
        guard kept[n] == nil, bytes < Self.maxBytes, let k = recent.frame(n) else { return }
        kept[n] = k
        bytes += k.bytes.count + k.pdus.prefix(k.pduCount).reduce(0) { $0 + $1.bytes.count }
    }

    static let attemptCommands: Set<HCIOpcode> = [.createConnection, .leCreateConnection, .leExtendedCreateConnection,
                                                  .leExtendedCreateConnectionV2]

    static func startsAttempt(_ frame: Frame) -> Bool {
        guard frame.kind == .command, let opcode = HCIPacketHeader.commandOpcode(frame.payload.reader) else { return false }
        return attemptCommands.contains(opcode)
    }

    /// (LE, Enhanced) Connection Complete, Disconnection Complete, or Command Status with a failure
    /// (Core v5.4 Vol 4 Part E 7.7.15, 7.7.65.1, 7.7.65.10), or Command Complete with a failed
    /// Status — a refusal (`link.command-refused` decides at the end).
    static func isNotableEvent(_ frame: Frame) -> Bool {
        let p = frame.payload.reader
        guard frame.kind == .event, p.bytes.count >= 3, let code = HCIPacketHeader.eventCode(p) else { return false }
        switch code {
        case HCIEventCode.disconnectionComplete: return true
        case HCIEventCode.connectionComplete: return true
        case HCIEventCode.commandStatus, HCIEventCode.commandComplete: return HCIPacketHeader.answeredStatus(p).map { $0 != 0 } ?? false
        case HCIEventCode.leMeta:
            let subevent = HCIPacketHeader.leSubevent(p)
            return subevent == LESubevent.connectionComplete || subevent == LESubevent.enhancedConnectionComplete
        default: return false
        }
    }
}
