import BLECapture
import BLEProtocol

/// A stretch in which the controller held host ACL packets of a link and gave no sign of life for it:
/// no Number Of Completed Packets (Core v5.4 Vol 4 Part E 7.7.19) and nothing received from the peer.
/// The app sees a frozen device; the link layer is retransmitting or not getting its connection events.
public struct LinkStall: Sendable {
    public typealias Mark = LinkForensics.Mark
    public enum End: Sendable, Equatable {
        case completed, received
        /// The link ended with the packets still waiting (Disconnection Complete's reason).
        case disconnected(HCIStatus)
    }
    /// The last sign of life before it: the oldest waiting packet, or a later completion or received packet.
    public var from: Mark
    /// The completion or received packet that ended it (or the Disconnection Complete).
    public var to: Mark
    public var end: End
    /// Host packets the controller held when it ended, and the oldest of them.
    public var waiting: Int
    public var oldest: SentPacket
    /// The host's LE Set Scan Enable that had scanning on while the link stalled (issued before the stall
    /// ended and not disabled since), if any: scanning shares the radio with the link.
    public var scanEnable: Mark?
    /// An SCO/eSCO link of the same controller open when the stall ended (its Synchronous Connection
    /// Complete): voice takes reserved slots (Core v5.4 Vol 2 Part B 8.6.2).
    public var audioLink: Mark?
    public var duration: Int64 { to.time - from.time }
}

/// What the session watches of the controller itself: commands waiting for their Command Complete or
/// Command Status (Vol 4 Part E 4.4), the host held off by Num_HCI_Command_Packets 0, the last scan
/// enable. Bounded: a few commands are ever outstanding.
public struct ControllerWatch: Sendable {
    public typealias Mark = LinkForensics.Mark
    public struct Issued: Sendable {
        public var opcode: HCIOpcode
        public var mark: Mark
    }
    /// Commands sent and not yet answered, per adapter, oldest first.
    public internal(set) var pending: [UInt16: [Issued]] = [:]
    /// Num_HCI_Command_Packets 0 since this event, per adapter.
    var heldSince: [UInt16: Mark] = [:]
    /// The last HCI event from each adapter's controller (a command unanswered while later events came
    /// was dropped, not cut by the capture's end).
    public var lastEvent: [UInt16: Mark] {
        var last = earlierEvents
        if let latest { last[latest.adapter] = latest.mark }
        return last
    }
    /// Set at every event: the last event's adapter and mark, stored in place; the other adapters' last
    /// events move to `earlierEvents` when an event comes from another adapter. Writing a dictionary
    /// entry per event hashed the adapter each time (~170 instructions per event).
    private var latest: (adapter: UInt16, mark: Mark)?
    private var earlierEvents: [UInt16: Mark] = [:]
    /// The last LE Set (Extended) Scan Enable per adapter, waiting for its answer, and whether it enabled.
    var scanCommand: [UInt16: (mark: Mark, enabled: Bool)] = [:]
    /// The Inquiry / Periodic Inquiry Mode command running, per adapter (Vol 4 Part E 7.1.1, 7.1.3), with its
    /// Inquiry_Length (1.28 s units); it ends with Inquiry Complete or the host's cancel.
    var inquiry: [UInt16: (mark: Mark, lengthUnits: UInt8, periodic: Bool)] = [:]
    /// The scan enable that turned scanning on, per adapter, while it is on.
    var scanningSince: [UInt16: Mark] = [:]
    /// SCO/eSCO links open, per adapter and handle: their Synchronous Connection Complete (Core v5.4 Vol 4
    /// Part E 7.7.35) until their Disconnection Complete. Bounded: a controller has a few.
    var audio: [UInt16: [UInt16: Mark]] = [:]
    /// The local side's BR/EDR Secure Connections support, per adapter: the host's (Write Secure Connections
    /// Host Support, 7.3.92, answered with success) and the controller's (Read Local Extended Features page 2
    /// bit 8, 7.4.4); nil until the capture shows it.
    public internal(set) var localSecureConnections: [UInt16: (host: Bool?, controller: Bool?)] = [:]
    /// Write Secure Connections Host Support sent, waiting for its Command Complete.
    var secureConnectionsHostWrite: [UInt16: Bool] = [:]
    static let maxPending = 64
    /// Host Number Of Completed Packets has no event unless it fails (Vol 4 Part E 7.3.40).
    static let silentCommands: Set<HCIOpcode> = [HCIOpcode(rawValue: 0x0C35)]
}

extension ControllerWatch {
    /// An HCI event from `adapter`'s controller (`lastEvent`).
    mutating func eventSeen(adapter: UInt16, _ mark: Mark) {
        if let latest, latest.adapter != adapter { earlierEvents[latest.adapter] = latest.mark }
        latest = (adapter, mark)
    }
}

extension SessionModel {
    /// A command went to the controller: it waits for its answer.
    func commandIssued(_ opcode: HCIOpcode, frame: Frame) {
        guard !ControllerWatch.silentCommands.contains(opcode), opcode.rawValue != 0 else { return }
        let mark = LinkForensics.Mark(frame: frame.number, time: frame.timestamp)
        var list = controller.pending[frame.adapter, default: []]
        if list.count >= ControllerWatch.maxPending { list.removeFirst() }
        list.append(.init(opcode: opcode, mark: mark))
        controller.pending[frame.adapter] = list
    }

    /// A Command Complete or Command Status: the oldest pending command with its opcode is answered;
    /// Num_HCI_Command_Packets 0 holds the host off until an event gives it a credit again.
    func commandAnswered(_ opcode: HCIOpcode, status: HCIStatus?, numPackets: UInt8, frame: Frame) {
        let mark = LinkForensics.Mark(frame: frame.number, time: frame.timestamp)
        let adapter = frame.adapter
        if numPackets == 0 {
            if controller.heldSince[adapter] == nil { controller.heldSince[adapter] = mark }
        } else if let since = controller.heldSince.removeValue(forKey: adapter) {
            emit(.controller, .commandsHeld(adapter: adapter, from: since, to: mark))
        }
        guard opcode.rawValue != 0, var list = controller.pending[adapter], let i = list.firstIndex(where: { $0.opcode == opcode }) else { return }
        let issued = list.remove(at: i)
        // HCI Reset discards the commands sent before it (Vol 4 Part E 7.3.2).
        if opcode == .reset { list.removeAll { $0.mark.frame < issued.mark.frame } }
        controller.pending[adapter] = list
        emit(.controller, .commandAnswered(adapter: adapter, opcode: opcode, command: issued.mark, answer: mark, status: status))
        if opcode == .leSetScanEnable || opcode == .leSetExtendedScanEnable, let scan = controller.scanCommand.removeValue(forKey: adapter),
           scan.enabled, status == nil || status == .success {
            emit(.controller, .scanEnabled(adapter: adapter, command: scan.mark, answer: mark))
        }
    }

    /// LE Set (Extended) Scan Enable sent.
    func scanCommand(enabled: Bool, frame: Frame) {
        let mark = LinkForensics.Mark(frame: frame.number, time: frame.timestamp)
        controller.scanCommand[frame.adapter] = (mark, enabled)
        if !enabled { controller.scanningSince[frame.adapter] = nil } else if controller.scanningSince[frame.adapter] == nil { controller.scanningSince[frame.adapter] = mark }
    }

    /// Inquiry Complete, or Inquiry Cancel / Exit Periodic Inquiry Mode sent (no Inquiry Complete follows a
    /// cancel, Vol 4 Part E 7.1.2): the inquiry that ran since its command ends here. Of a periodic inquiry
    /// only the first run is timed (the controller does not say when the next starts).
    func inquiryEnded(frame: Frame) {
        guard let run = controller.inquiry.removeValue(forKey: frame.adapter) else { return }
        emit(.controller, .inquiryRan(adapter: frame.adapter, command: run.mark, end: .init(frame: frame.number, time: frame.timestamp),
                                      lengthUnits: run.lengthUnits, periodic: run.periodic))
    }

    /// Synchronous Connection Complete with success: an SCO/eSCO link is open until its Disconnection Complete.
    func audioOpened(handle: UInt16, frame: Frame) {
        guard controller.audio[frame.adapter, default: [:]].count < 16 else { return }
        controller.audio[frame.adapter, default: [:]][handle] = .init(frame: frame.number, time: frame.timestamp)
    }

    /// HCI Reset while links were open: they end without a Disconnection Complete.
    func controllerReset(closing links: [Connection], frame: Frame) {
        guard !links.isEmpty else { return }
        emit(.controller, .controllerRestarted(adapter: frame.adapter, frame: frame.number, time: frame.timestamp, closed: links,
                                              version: nil))
    }

    /// Read Local Version Information answered: a different controller (or firmware) than before is a reload.
    func localVersionRead(_ version: LocalVersion, frame: Frame) {
        if let old = localVersions[frame.adapter], old != version {
            emit(.controller, .controllerRestarted(adapter: frame.adapter, frame: frame.number, time: frame.timestamp, closed: [],
                                                  version: (old, version)))
        }
        localVersions[frame.adapter] = version
    }

    /// A completion or a received packet of `c`: if the controller had been holding host packets with no
    /// sign of life for half a second or more, that stall ends here. Inlined: at most completions and
    /// received packets the controller holds nothing, or nothing older than `LinkStall.floor` (a stall
    /// starts at the oldest waiting packet or later), and the call alone cost more than that test.
    @inline(__always)
    func signOfLife(_ c: Connection, _ end: LinkStall.End, frame: Frame) {
        guard let oldest = c.buffers.unacknowledged.first, frame.timestamp - oldest.time >= LinkStall.floor else { return }
        stallEnds(c, end, frame: frame)
    }

    private func stallEnds(_ c: Connection, _ end: LinkStall.End, frame: Frame) {
        guard let oldest = c.buffers.unacknowledged.first else { return }
        var from = LinkForensics.Mark(frame: oldest.frame, time: oldest.time)
        if let done = c.buffers.lastCompleted, done.time > from.time { from = done }
        if let heard = c.traffic.lastReceivedTime, let f = c.traffic.lastReceivedFrame, heard > from.time { from = .init(frame: f, time: heard) }
        guard frame.timestamp - from.time >= LinkStall.floor else { return }
        let scan = controller.scanningSince[c.adapter]
        let audio = controller.audio[c.adapter]?.values.min { $0.frame < $1.frame }
        let stall = LinkStall(from: from, to: .init(frame: frame.number, time: frame.timestamp), end: end,
                              waiting: c.buffers.unacknowledged.count, oldest: oldest, scanEnable: scan, audioLink: audio)
        if stall.duration > (c.buffers.longestStall?.duration ?? 0) { c.buffers.longestStall = stall }
        if case .disconnected = end { c.buffers.stallAtEnd = stall }
        emit(.controller, .linkStall(c, stall))
    }

    /// A Vendor Specific event carrying Android's Bluetooth Quality Report.
    func qualityReport(_ report: QualityReport.LinkQuality, frame: Frame) {
        let c = live[LinkKey(adapter: frame.adapter, handle: report.handle)]
        if let c, report.kind == .approachingLSTO { c.forensics.approachingLSTO = .init(frame: frame.number, time: frame.timestamp) }
        emit(.controller, .qualityReport(c, adapter: frame.adapter, frame: frame.number, time: frame.timestamp, report: report))
    }

    /// An LL procedure (or the link) ended with Instant Passed or a procedure collision.
    func procedureStatus(_ c: Connection?, _ status: HCIStatus, _ procedure: LLProcedure, frame: Frame) {
        guard LLProcedure.collisionStatuses.contains(status.rawValue) else { return }
        emit(.controller, .procedureFailed(c, adapter: frame.adapter, frame: frame.number, time: frame.timestamp, status: status, procedure: procedure))
    }
}

extension LinkStall {
    /// Shorter stretches are not recorded (an HCI log's timestamps and a few connection events).
    static let floor: Int64 = 500_000
}

/// The procedure a collision or Instant Passed status ended (Core v5.4 Vol 1 Part F 2.35, 2.40, 2.42).
public enum LLProcedure: Sendable, Equatable {
    case connectionUpdate, phyUpdate, encryption, disconnection
    /// A BR/EDR role switch with `peer` (Role Change with an error); `role` is the local role it left (0 central).
    case roleSwitch(peer: BDAddr, role: UInt8)
    /// A command refused in its Command Status.
    case command(HCIOpcode)

    /// LMP Error Transaction Collision / LL Procedure Collision (0x23), Instant Passed (0x28), Different
    /// Transaction Collision (0x2A).
    public static let collisionStatuses: Set<UInt8> = [0x23, 0x28, 0x2A]

    public var name: String {
        switch self {
        case .connectionUpdate: "connection update"
        case .phyUpdate: "PHY update"
        case .encryption: "encryption start"
        case .disconnection: "link"
        case .roleSwitch: "role switch"
        case let .command(opcode): HCIDecoder.commandName(opcode)
        }
    }
}

/// A link-layer feature procedure refused or not supported (`link.feature-refused`): the link keeps
/// what it had (1M PHY, 27-byte PDUs) or goes without the feature.
public struct FeatureRefusal: Sendable {
    public enum Procedure: Sendable, Hashable {
        case phy, dataLength
        /// Another LL control opcode (the UnknownType of LL_UNKNOWN_RSP).
        case control(UInt8)

        /// The procedure an LL control opcode starts.
        init(opcode: UInt8) {
            switch opcode {
            case LLControlPDU.phyRequestOpcode: self = .phy
            case LLControlPDU.lengthRequestOpcode: self = .dataLength
            default: self = .control(opcode)
            }
        }
    }
    public enum Source: Sendable, Equatable {
        /// On air: LL_UNKNOWN_RSP (the peer does not know the PDU) or LL_REJECT_EXT_IND, from the
        /// peripheral or the central.
        case unknownResponse(byPeripheral: Bool)
        case rejected(byPeripheral: Bool)
        /// Over HCI: LE PHY Update Complete with an error, or the host's command refused.
        case updateComplete
        case command(HCIOpcode)
    }
    public var procedure: Procedure
    public var source: Source
    /// The error code (nil for LL_UNKNOWN_RSP, which carries none).
    public var status: HCIStatus?
    public var frame: Int
    public var time: Int64
}

extension SessionModel {
    /// A feature procedure refused (`FeatureRefusal`); on air the link is known by its handle.
    func featureRefused(_ c: Connection?, _ refusal: FeatureRefusal) {
        emit(.link, .featureRefused(c, refusal))
    }

    func featureRefused(handle: UInt16, _ refusal: FeatureRefusal, frame: Frame) {
        featureRefused(live[LinkKey(adapter: frame.adapter, handle: handle)], refusal)
    }
}

extension SessionModel {
    /// LE Set PHY (answered by Command Status) or LE Set Data Length (Command Complete) refused:
    /// the procedure never starts (Core v5.4 Vol 4 Part E 7.8.49, 7.8.33). The connection is not
    /// named by the answer of LE Set PHY; with one LE link open it is that one.
    func commandFeatureRefused(_ opcode: HCIOpcode, _ status: HCIStatus, frame: Frame) {
        let procedure: FeatureRefusal.Procedure
        switch opcode {
        case .leSetPHY: procedure = .phy
        case .leSetDataLength: procedure = .dataLength
        default: return
        }
        let le = live.values.filter { $0.isLE && $0.adapter == frame.adapter }
        featureRefused(le.count == 1 ? le.first : nil,
                       .init(procedure: procedure, source: .command(opcode), status: status, frame: frame.number, time: frame.timestamp))
    }
}
