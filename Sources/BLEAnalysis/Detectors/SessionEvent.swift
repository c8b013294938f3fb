import BLEProtocol

/// What the session model tells the detectors as frames stream by. Detectors never see frames:
/// they are fed these events (DESIGN.md), each with the frame numbers that will be their evidence.
/// Cases with large payloads are `indirect` (boxed): the enum stays the size of the per-packet
/// events (ACL sent/received, credits, writes), which are copied on every dispatch.
public enum SessionEvent {
    // Connections
    case attemptStarted(index: Int)
    case attemptEnded(index: Int)
    case connected(Connection)
    /// Before the link's buffers are released: the host's packets still unacknowledged (frame, time),
    /// oldest first (bounded).
    indirect case disconnected(Connection, unacknowledged: [SentPacket])

    // Flow control
    case aclSent(Connection, frame: Int, time: Int64, inUseBefore: Int, capacity: Int?)
    case aclReceived(Connection, frame: Int, time: Int64)
    case creditsReturned(Connection, frame: Int, time: Int64, returned: Int, inUseAfter: Int)

    // ATT
    /// `overlapping`: a request of the same side that was still outstanding (a protocol violation).
    indirect case attRequest(Connection, ATTBearer.Pending, sent: Bool, overlapping: ATTBearer.Pending?)
    /// `request` is nil when nothing was outstanding (a response with no request).
    indirect case attResponse(Connection, request: ATTBearer.Pending?, opcode: ATTOpcode, valueLength: Int, frame: Int, time: Int64, sent: Bool)
    indirect case attError(Connection, request: ATTBearer.Pending?, error: ATTErrorCode, handle: UInt16, frame: Int, time: Int64, sent: Bool)
    /// A notification or indication; `unconfirmed` is an earlier indication still waiting for its
    /// confirmation; `first` is set for the first value of this handle on the connection.
    indirect case attValue(Connection, handle: UInt16, length: Int, indication: Bool, frame: Int, time: Int64, sent: Bool,
                  unconfirmed: ATTBearer.Pending?, first: Bool)
    indirect case attConfirmation(Connection, indication: ATTBearer.Pending?, frame: Int, time: Int64)
    case attWrite(Connection, handle: UInt16, length: Int, command: Bool, frame: Int, time: Int64, sent: Bool)
    case mtuExchanged(Connection, requestFrame: Int, frame: Int, time: Int64)
    /// An ATT PDU the capture cut (incl_len < orig_len, btsnooz): its values are not decidable.
    case captureTruncatedATT(Connection, frame: Int, time: Int64)
    /// The server said its database changed: `c.att.serviceChanged` was just set (a Service Changed
    /// indication, or a Database Out Of Sync error). Rare: `att.stale-cache` waits for it before it
    /// asks for the requests and writes it checks.
    case databaseChanged(Connection)

    // GATT subscriptions (CCCD writes)
    indirect case subscriptionWritten(Connection, Subscription, characteristic: GATTDatabase.Characteristic?)
    indirect case subscriptionAnswered(Connection, Subscription, responseFrame: Int, time: Int64)

    // Security
    case pairingRequest(Connection, frame: Int, time: Int64, sent: Bool)
    indirect case pairingFailed(Connection, frame: Int, time: Int64, reason: SMPFailureReason, sent: Bool)
    case encryptionChanged(Connection, frame: Int, time: Int64, status: HCIStatus, enabled: Bool)
    /// BR/EDR Secure Simple Pairing ended with an error (Simple Pairing Complete): the last step the
    /// controller asked the host for, and the host's negative reply if it gave one.
    indirect case simplePairingFailed(Connection, frame: Int, time: Int64, status: HCIStatus, step: SSPStep?, rejected: Int?)
    /// BR/EDR Authentication Complete with an error (Core v5.4 Vol 4 Part E 7.7.6).
    case authenticationFailed(Connection, frame: Int, time: Int64, status: HCIStatus)

    // Link
    /// LE Connection Update refused by the controller (Command Status with an error): the
    /// parameters never change.
    /// `completed`: it failed in its LE Connection Update Complete (the LL procedure ran), not in its Command Status.
    case parameterUpdateRefused(Connection, commandFrame: Int, frame: Int, time: Int64, status: HCIStatus, completed: Bool)
    /// The peer asked for new connection parameters (L2CAP Connection Parameter Update Request).
    case parameterRequest(Connection, frame: Int, time: Int64, sent: Bool)
    /// The answer to it (`accepted`: result 0).
    case parameterResponse(Connection, frame: Int, time: Int64, sent: Bool, accepted: Bool)
    /// A link-layer feature procedure refused or not supported (`FeatureRefusal`).
    indirect case featureRefused(Connection?, FeatureRefusal)
    /// A credit-based channel refused, or a signalling command rejected (`SignalingRefusal`).
    indirect case signalingRefused(Connection, SignalingRefusal)
    /// A credit-based channel's sender used its last credit and sent again as soon as credits came.
    indirect case creditWait(Connection, CreditChannels.Wait)
    /// On air: the data channel map a CONNECT_IND (`indication` false) or an LL_CHANNEL_MAP_IND set.
    case airChannelMap(Connection, frame: Int, time: Int64, map: UInt64, indication: Bool)
    /// On air: one side sent the same PDU (same SN, same bytes) `copies` times in a row (Core v5.4
    /// Vol 6 Part B 4.5.9), from `first` to `last`; `lost` when the link was lost before the next new PDU.
    indirect case airRetransmissionBurst(Connection, AirRetransmissionBurst)
    /// On air: a data PDU sent in the clear (or failing its MIC) after both sides encrypted (Vol 6 Part B 5.1.3.1).
    indirect case airUnencryptedPDU(Connection, AirUnencryptedPDU)

    // Controller (`SessionModel+Controller`)
    /// A command's Command Complete or Command Status (`status` nil: a Command Complete without one).
    case commandAnswered(adapter: UInt16, opcode: HCIOpcode, command: LinkForensics.Mark, answer: LinkForensics.Mark, status: HCIStatus?)
    /// Num_HCI_Command_Packets was 0 from `from` until the event at `to` gave the host a credit back.
    case commandsHeld(adapter: UInt16, from: LinkForensics.Mark, to: LinkForensics.Mark)
    case hardwareError(adapter: UInt16, frame: Int, time: Int64, code: UInt8)
    case bufferOverflow(adapter: UInt16, frame: Int, time: Int64)
    /// HCI Reset with links open (`closed`), or the controller's version changing (old, new).
    indirect case controllerRestarted(adapter: UInt16, frame: Int, time: Int64, closed: [Connection], version: (LocalVersion, LocalVersion)?)
    /// LE Set (Extended) Scan Enable enabling scanning, and its successful answer.
    case scanEnabled(adapter: UInt16, command: LinkForensics.Mark, answer: LinkForensics.Mark)
    /// Inquiry or Periodic Inquiry Mode from its command to its Inquiry Complete (or the host's cancel).
    case inquiryRan(adapter: UInt16, command: LinkForensics.Mark, end: LinkForensics.Mark, lengthUnits: UInt8, periodic: Bool)
    /// The controller held host packets of a link with no sign of life for ≥ 0.5 s (`LinkStall`).
    indirect case linkStall(Connection, LinkStall)
    indirect case qualityReport(Connection?, adapter: UInt16, frame: Int, time: Int64, report: QualityReport.LinkQuality)
    /// An LL procedure, a command or the link ended with Instant Passed or a procedure collision.
    case procedureFailed(Connection?, adapter: UInt16, frame: Int, time: Int64, status: HCIStatus, procedure: LLProcedure)

    // Advertising
    case advertisingData(frame: Int, time: Int64, declaredLength: Int, problem: String?)
    case advertisingReportProblem(frame: Int, time: Int64, problem: String, address: BDAddr)
    case advertisingEnable(frame: Int, time: Int64, adapter: UInt16, enabled: Bool)
    /// LE Periodic Advertising Sync Lost: the controller lost the train of `syncHandle`.
    case periodicSyncLost(adapter: UInt16, frame: Int, time: Int64, syncHandle: UInt16)
    /// On air: a SCAN_REQ heard right after the advertiser's scannable PDU on the same channel, and whether
    /// its SCAN_RSP came next (Core v5.4 Vol 6 Part B 4.4.3).
    case airScanRequest(advertiser: BDAddr, scanner: BDAddr, frame: Int, time: Int64, answered: Bool)
    /// On air: a scannable legacy advertising PDU (ADV_IND, ADV_SCAN_IND) the sniffer heard, and the scanner
    /// whose SCAN_REQ followed it on the same channel (nil: none did), decided at the next advertising packet.
    case airScanOpportunity(advertiser: BDAddr, requester: BDAddr?, frame: Int)
    /// On air: the same legacy advertising PDU on the same channel `gap` µs (sniffer clock) after its last
    /// copy there (`previous`), less than the 20 ms advInterval minimum (Vol 6 Part B 4.4.2.2.1).
    case airAdvertisingGap(advertiser: BDAddr, channel: UInt8, previous: Int, frame: Int, time: Int64, gap: Int64)

    /// The kinds, for routing events only to the detectors that want them: fine-grained, because
    /// notifications and ACL packets are most of a capture and only a few rules look at them.
    public enum Kind: Int, CaseIterable, Sendable {
        case attempt, connection, aclSent, aclReceived, credits
        /// Notifications are routed only when they matter to a rule: the first of a handle on a
        /// connection (`attValueFirst`), or one that fills ATT_MTU−3 (`attValueFull`).
        case attRequest, attResponse, attValueFirst, attValueFull, attIndication, attWrite, mtu
        case subscription, security, advertising, link, controller
        /// `databaseChanged` only.
        case gattChange
    }

    public var kind: Kind {
        switch self {
        case .attemptStarted, .attemptEnded: .attempt
        case .connected, .disconnected: .connection
        case .aclSent: .aclSent
        case .aclReceived: .aclReceived
        case .creditsReturned: .credits
        case .attRequest: .attRequest
        case .attResponse, .attError: .attResponse
        case let .attValue(_, _, _, indication, _, _, _, _, first): indication ? .attIndication : first ? .attValueFirst : .attValueFull
        case .attConfirmation: .attIndication
        case .attWrite: .attWrite
        case .mtuExchanged, .captureTruncatedATT: .mtu
        case .databaseChanged: .gattChange
        case .subscriptionWritten, .subscriptionAnswered: .subscription
        case .pairingRequest, .pairingFailed, .encryptionChanged, .simplePairingFailed, .authenticationFailed: .security
        case .advertisingData, .advertisingReportProblem, .advertisingEnable, .periodicSyncLost, .airScanRequest, .airScanOpportunity, .airAdvertisingGap: .advertising
        case .parameterUpdateRefused, .parameterRequest, .parameterResponse, .featureRefused, .signalingRefused, .creditWait,
             .airChannelMap, .airRetransmissionBurst, .airUnencryptedPDU: .link
        case .commandAnswered, .commandsHeld, .hardwareError, .bufferOverflow, .controllerRestarted, .scanEnabled, .inquiryRan, .linkStall,
             .qualityReport, .procedureFailed: .controller
        }
    }
}

/// An ACL packet the host sent, by frame and time.
public struct SentPacket: Sendable {
    public var frame: Int
    public var time: Int64
}

/// What detectors may look at besides events: the model (for connections, attempts, databases),
/// the configuration, and the end of the capture. A class, so handing it to every detector call
/// copies nothing.
public final class DetectorContext {
    public let model: SessionModel
    public let configuration: RuleConfiguration
    /// Time of the last frame (µs), known at `finish`.
    public internal(set) var captureEnd: Int64 = 0
    public internal(set) var lastFrame: Int = 0
    /// The kinds some detector asks for now (`demand`), a bit per kind: the model builds the events of a
    /// kind a detector lists in `onDemand` only while one asks.
    @exclusivity(unchecked) private(set) var demanded: UInt64 = 0
    /// Per kind, how many detectors ask for it now.
    @exclusivity(unchecked) private var askers = [Int](repeating: 0, count: SessionEvent.Kind.allCases.count)

    init(model: SessionModel, configuration: RuleConfiguration) {
        self.model = model
        self.configuration = configuration
    }

    /// A detector starts (`true`) or stops asking for events of `kind`, one of its `onDemand` kinds;
    /// each start is matched by one stop.
    func demand(_ kind: SessionEvent.Kind, _ on: Bool) {
        askers[kind.rawValue] += on ? 1 : -1
        if askers[kind.rawValue] > 0 { demanded |= 1 << kind.rawValue } else { demanded &= ~(1 << kind.rawValue) }
    }
}

/// One detector: usually one rule. Fed the events of the kinds it lists, then asked for its findings.
public protocol Detector: AnyObject {
    static var rule: RuleInfo { get }
    /// Event kinds this detector wants.
    var kinds: [SessionEvent.Kind] { get }
    /// Of `kinds`, those it wants only while it asks for them (`DetectorContext.demand`): a detector
    /// that needs a link's next packet after a rare event need not have every packet built for it.
    var onDemand: [SessionEvent.Kind] { get }
    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding])
    /// Called once at the end of the capture.
    func finish(_ context: DetectorContext, _ findings: inout [Finding])
    /// Whether the end of the pass still needs the finished connection `c` whole: a finding of `c`
    /// to decide or change, or `c`'s data for a decision across connections that keeping a tally
    /// cannot replace. A finished connection is summarised (`ConnectionRetirement`) only when no
    /// detector keeps it.
    func keeps(_ c: Connection, _ context: DetectorContext) -> Bool
    /// `c` is summarised: decide now what `finish` would decide of it, add what the end needs of it
    /// to this detector's tallies, and drop what this detector holds of it. `finish` then sees only
    /// the connections still held (`SessionModel.connections`).
    func retire(_ c: Connection, _ context: DetectorContext, _ findings: inout [Finding])
    /// The engine compacted `findings` (summarised connections' places given back): a detector that
    /// holds indexes into it moves each (`moves(i)`).
    func findingsMoved(_ moves: FindingMoves)
}

extension Detector {
    public func finish(_ context: DetectorContext, _ findings: inout [Finding]) {}
    public func keeps(_ c: Connection, _ context: DetectorContext) -> Bool { false }
    public func retire(_ c: Connection, _ context: DetectorContext, _ findings: inout [Finding]) {}
    public func findingsMoved(_ moves: FindingMoves) {}
    public var onDemand: [SessionEvent.Kind] { [] }
    var rule: RuleInfo { Self.rule }
    /// A threshold of this detector's rule, in its unit, as configured.
    func threshold(_ name: String, _ context: DetectorContext) -> Double { context.configuration.threshold(Self.rule, name) }
    /// A threshold given in seconds, as µs.
    func micros(_ name: String, _ context: DetectorContext) -> Int64 { Int64(threshold(name, context) * 1_000_000) }
}
