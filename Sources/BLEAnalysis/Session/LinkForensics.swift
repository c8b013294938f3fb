import BLEProtocol

/// What a connection's end may be explained by, recorded by the session as the frames go by and
/// read when the pass ends (`Causes`): the peer heard advertising, parameters the peer asked for,
/// host procedures still pending, the host's own Disconnect, the pairing in progress. Each fact is
/// a frame and its time, so a cause names its evidence.
public struct LinkForensics: Sendable {
    public struct Mark: Sendable, Equatable {
        public var frame: Int
        public var time: Int64
    }
    /// The controller's last Android Quality Report "Approaching LSTO" for the link: nothing received
    /// for half the supervision timeout (`radio.quality-report`).
    public var approachingLSTO: Mark?
    /// The latest connectable advertising report from the peer's address while the link was open
    /// (a peripheral cannot advertise connectable to us while it holds the link with us, unless it
    /// serves several centrals: `Causes` takes it only when it came after the peer's last packet).
    public internal(set) var peerAdvertised: Mark?
    /// How many such reports (the first after the last packet is `peerAdvertisedFirst`).
    public internal(set) var peerAdvertisedFirst: Mark?
    /// The host's HCI Disconnect command and the reason it gave.
    public internal(set) var localDisconnect: Mark?
    /// On an air capture the "host's Disconnect" is the central's LL_TERMINATE_IND (Core v5.4 Vol 6 Part B 2.4.2.2).
    public internal(set) var localDisconnectOnAir = false
    /// The peer's last L2CAP Connection Parameter Update Request (Core v5.4 Vol 3 Part A 4.20) and the
    /// supervision timeout it asked for (10 ms units).
    public internal(set) var peerParameterRequest: Mark?
    public internal(set) var requestedTimeoutUnits: UInt16?
    /// The last LE Connection Update Complete that changed the parameters, and the timeout before it.
    public internal(set) var lastParameterChange: Mark?
    public internal(set) var timeoutBeforeChange: UInt16?
    /// LE Connection Update sent and accepted (Command Status success), its Complete not yet seen.
    public internal(set) var pendingConnectionUpdate: Mark?
    /// A connection update whose procedure died with the link (its Complete carries LL Response
    /// Timeout or a loss reason): the command, its Complete, the status.
    public internal(set) var failedConnectionUpdate: (command: Mark, complete: Mark, status: HCIStatus)?
    /// LE Enable Encryption sent (or the LTK Request answered), Encryption Change not yet seen.
    public internal(set) var pendingEncryption: Mark?
    /// The last Encryption Change / Key Refresh with an error status.
    public internal(set) var encryptionFailure: (mark: Mark, status: HCIStatus)?

    public init() {}
}

/// A pairing as the capture tells it (Core v5.4 Vol 3 Part H 2.3, 3.5): who asked, the two sides'
/// parameters, the method they select, how far it got and how it ended.
public struct PairingStory: Sendable {
    public enum Outcome: Sendable, Equatable {
        /// Still running when the link closed or the capture ended.
        case open
        /// Keys distributed or encryption started with the new key.
        case succeeded
        case failed(reason: SMPFailureReason, sentByHost: Bool)
        /// No SMP PDU for 30 s after the last one, with neither side ending it (3.4).
        case timedOut
    }
    public var requestFrame: Int
    public var requestTime: Int64
    public var initiatorIsHost: Bool
    public var request: SMP.PairingParameters
    public var response: SMP.PairingParameters?
    public var responseFrame: Int?
    public var responseTime: Int64?
    /// The last SMP PDU of this pairing.
    public var last: LinkForensics.Mark
    public var lastCode: SMPCode
    public var lastSentByHost: Bool
    /// The step the pairing had reached when Pairing Failed came (the SMP code before it).
    public var failedAfter: SMPCode?
    /// How long after that step the Pairing Failed came (µs).
    public var failedAfterMicros: Int64?
    public var outcome: Outcome = .open
    public var outcomeFrame: Int?

    /// LE Secure Connections when both sides set the SC flag, else LE legacy pairing (2.3.5.1).
    public var secureConnections: Bool? {
        response.map { request.authReq.contains(.secureConnections) && $0.authReq.contains(.secureConnections) }
    }
    public var method: SMP.PairingMethod? {
        response.map { SMP.PairingMethod.select(initiator: request, responder: $0) }
    }
    /// The smaller of the two maximum key sizes: the key size the pairing will use.
    public var keySize: UInt8? { response.map { min(request.maxEncryptionKeySize, $0.maxEncryptionKeySize) } }
    public var bonding: Bool { request.authReq.contains(.bonding) && (response?.authReq.contains(.bonding) ?? true) }
}

/// The step of a BR/EDR Secure Simple Pairing the controller asked the host for (Core v5.4 Vol 4 Part E
/// 7.7.42–7.7.44): which association model it is, and where.
public struct SSPStep: Sendable {
    public enum Kind: String, Sendable {
        case numericComparison = "User Confirmation Request (Numeric Comparison)"
        case passkeyEntry = "User Passkey Request (Passkey Entry)"
    }
    public var kind: Kind
    public var frame: Int
}

/// One kind of command refusal: the same command refused with the same status on one adapter.
public struct CommandRefusal: Sendable {
    public struct Key: Hashable, Sendable {
        public var adapter: UInt16
        public var opcode: HCIOpcode
        public var status: HCIStatus
    }
    public var key: Key
    public var count: Int
    public var first: LinkForensics.Mark
    public var last: LinkForensics.Mark
}
