import BLEBytes
import BLEProtocol

/// A live key for a connection: the same handle is reused after a disconnect, so the session model
/// maps this key to the connection that is open *now*.
public struct LinkKey: Hashable, Sendable {
    public var adapter: UInt16
    public var handle: UInt16
    public init(adapter: UInt16, handle: UInt16) { (self.adapter, self.handle) = (adapter, handle) }
}

/// One connection's story: lifecycle, parameters, ATT bearer, GATT activity, security, counters.
/// A closed connection keeps this summary, not its frames.
public final class Connection: @unchecked Sendable {   // safe: mutated only by the single analysis pass
    public enum Role: String, Sendable { case central, peripheral, unknown }

    /// 1-based order of appearance in the capture.
    public let index: Int
    /// Where per-connection state lives in arrays (`ConnectionState`): below the connections held at
    /// once, a summarised connection's slot is given to a later one.
    let slot: Int
    public let adapter: UInt16
    public let handle: UInt16
    @exclusivity(unchecked) public internal(set) var isLE = true
    /// The local host's role.
    @exclusivity(unchecked) public internal(set) var role: Role = .unknown
    @exclusivity(unchecked) public internal(set) var peerAddress: BDAddr?
    @exclusivity(unchecked) public internal(set) var peerAddressType: LEAddressType?
    /// The peer's name: advertised (Complete/Shortened Local Name) or read (GAP Device Name 0x2A00).
    @exclusivity(unchecked) public internal(set) var peerName: String?
    /// The peer's identity address, from its Identity Address Information (Core v5.4 Vol 3 Part H
    /// 3.6.4): the same device behind a resolvable private address that rotates.
    @exclusivity(unchecked) public internal(set) var peerIdentityAddress: BDAddr?
    /// Long Term Keys of this link (bytes as sent): the one the host last encrypted with (LE Enable
    /// Encryption) and the one the peer distributed (SMP Encryption Information), to recognise the
    /// bond on a later link (`SessionModel.bondedIdentities`). An all-zero key (a redacted
    /// capture) is never kept.
    @exclusivity(unchecked) var longTermKeys: [[UInt8]] = []

    /// How reports name the peer: "NAME (ADDR)", "ADDR", or "handle 0xNNNN" when neither is known.
    public var peerLabel: String { Self.peerLabel(name: peerName, address: peerAddress, handle: handle) }

    /// "NAME (ADDR)", "ADDR", or "the peer on handle 0xNNNN" (a connection's, or a summarised one's).
    static func peerLabel(name: String?, address: BDAddr?, handle: UInt16) -> String {
        switch (name, address) {
        case let (name?, address?): "\(name) (\(address))"
        case let (name?, nil): name
        case let (nil, address?): address.description
        case (nil, nil): "the peer on handle 0x" + Hex.pad(handle, 4)
        }
    }

    /// The connection's state in parts, each written by one layer (`ConnectionParts.swift`).
    @exclusivity(unchecked) public internal(set) var lifecycle = ConnectionLifecycle()
    @exclusivity(unchecked) public internal(set) var snifferLoss = SnifferLoss()
    @exclusivity(unchecked) public internal(set) var link = LinkState()
    @exclusivity(unchecked) public internal(set) var encryption = EncryptionState()
    @exclusivity(unchecked) public internal(set) var traffic = TrafficCounts()
    @exclusivity(unchecked) public internal(set) var buffers = ControllerBuffers()

    @exclusivity(unchecked) public internal(set) var att = ATTBearer()
    /// Application data per direction with what the link allowed (`LinkBudget.swift`).
    @exclusivity(unchecked) public internal(set) var transfer = Transfer()
    /// ATT bearers on L2CAP channels (Core v5.4 Vol 3 Part F 3.2.11): ATT over BR/EDR (PSM 0x001F, basic
    /// mode) and Enhanced ATT (SPSM 0x0027, credit-based), by the CID the host receives on. Each bearer
    /// has its own transactions: a request on one does not block another.
    @exclusivity(unchecked) public internal(set) var channelBearers: [UInt16: ChannelBearer] = [:]
    /// BR/EDR signalling: connection requests waiting for their response, by identifier.
    @exclusivity(unchecked) var pendingChannels: [UInt8: (psm: UInt16, sourceCID: UInt16, requesterIsHost: Bool)] = [:]
    /// Activity over time for charts (throughput, values, buffers in use): kept only when
    /// `SessionModel.recordsActivity` is on (the HTML report turns it on), empty otherwise.
    @exclusivity(unchecked) public internal(set) var activity = ActivitySeries()
    /// LE credit-based L2CAP channels opened on this connection.
    @exclusivity(unchecked) public internal(set) var creditChannels = CreditChannels()
    @exclusivity(unchecked) public internal(set) var smp = SMPState()
    /// The pairings on this connection, in order (bounded): method, parameters, outcome.
    @exclusivity(unchecked) public internal(set) var pairings: [PairingStory] = []
    static let maxPairings = 16
    /// Facts that may explain how the connection ended (`Causes`).
    @exclusivity(unchecked) public internal(set) var forensics = LinkForensics()
    /// Why the connection ended, from the capture (`SessionModel.explainEnds`, when the pass ends; in a
    /// live session `DecidedFindings` explains it once its end is decided).
    @exclusivity(unchecked) public internal(set) var endCause: LinkEnd?
    /// The peer's GATT server (the host is its client), when discovery or use showed it.
    @exclusivity(unchecked) public internal(set) var peerGATT: GATTDatabase?
    /// The host's own GATT server as the peer used it (peripheral-side captures).
    @exclusivity(unchecked) public internal(set) var localGATT: GATTDatabase?

    /// The database of whichever side is the server for a PDU.
    public func gatt(serverIsHost: Bool) -> GATTDatabase? { serverIsHost ? localGATT : peerGATT }
    /// How the story and every renderer name an attribute: what discovery showed of it
    /// (`GATTDatabase.describe`), else its handle.
    public func attributeName(_ handle: UInt16, serverIsHost: Bool) -> String {
        gatt(serverIsHost: serverIsHost)?.describe(handle) ?? "handle 0x" + Hex.pad(handle, 4)
    }

    /// Per value handle: notifications and indications seen.
    @exclusivity(unchecked) public internal(set) var valueStreams = HandleMap<ValueStream>()
    /// Per value handle: Write Commands (write without response) seen.
    @exclusivity(unchecked) public internal(set) var writeStreams = HandleMap<ValueStream>()
    /// Per CCCD handle: the last write and its outcome.
    @exclusivity(unchecked) public internal(set) var subscriptions: [UInt16: Subscription] = [:]

    @exclusivity(unchecked) public private(set) var timeline: [TimelineEvent] = []
    @exclusivity(unchecked) public private(set) var droppedTimelineEvents = 0
    static let maxTimeline = 400

    init(index: Int, slot: Int, adapter: UInt16, handle: UInt16) {
        self.index = index
        self.slot = slot
        self.adapter = adapter
        self.handle = handle
    }

    public var isOpen: Bool { lifecycle.disconnectFrame == nil }
    /// The link was lost (supervision timeout, failed to establish, LMP/LL response timeout, MIC failure).
    var endedByLoss: Bool { lifecycle.disconnectReason.map { LinkLoss.reasons.contains($0.rawValue) } ?? false }
    /// Time of the capture's last frame, set when the pass ends (an open connection lasted until then).
    public internal(set) var captureEnd: Int64 = 0
    public var intervalMillis: Double { Double(link.intervalUnits) * 1.25 }
    public var supervisionTimeoutMillis: Int { Int(link.timeoutUnits) * 10 }

    /// Time the connection started (set-up, or first traffic when inferred).
    public var startTime: Int64? { lifecycle.completeTime ?? lifecycle.attemptTime ?? traffic.firstDataTime }
    /// Time the link was up (set-up complete, or first traffic when inferred), else `startTime`: where a
    /// connection's bar begins on the report's timeline.
    public var barStart: Int64? { lifecycle.completeTime ?? traffic.firstDataTime ?? startTime }

    /// Replaces the sentence of event `i` (the facts it tells were complete only at the end).
    func retell(_ i: Int, _ fact: StoryFact) { timeline[i].fact = fact }

    /// At the link's end: the story and the request counts grew by doubling while the link was up; a
    /// finished connection keeps them at their length (issue 32: a long live session keeps every
    /// finished connection for the final report, so spare capacity is memory that grows with the
    /// connections). Events told later (the end's explanations) still append.
    func linkEnded() {
        if timeline.capacity > timeline.count { timeline = timeline.withUnsafeBufferPointer { Array($0) } }
        att.requestStats.compact()
    }

    func note(_ time: Int64, _ frame: Int, _ kind: TimelineEvent.Kind, _ fact: StoryFact, _ fields: TimelineEvent.Fields = .init()) {
        guard timeline.count < Self.maxTimeline else { droppedTimelineEvents += 1; return }
        var e = TimelineEvent(time: time, frame: frame, kind: kind, fact: fact)
        e.fields = fields
        timeline.append(e)
    }
}

/// An ATT bearer on a dynamic L2CAP channel.
public struct ChannelBearer: Sendable {
    public enum Kind: String, Sendable { case brEDR = "ATT over BR/EDR", enhanced = "EATT" }
    public var kind: Kind
    public var hostCID: UInt16
    public var peerCID: UInt16
    public var att = ATTBearer()
}

/// One line of a connection's story.
public struct TimelineEvent: Sendable {
    public enum Kind: String, Sendable {
        case attempt, connected, connectionFailed, parameters, dataLength, phy, mtu, discovery, subscribe
        case subscribeFailed, notifications, indications, read, write, attError, security, disconnected, signaling
        /// A summary of the application's answered requests on the connection (counts, latency).
        case requests
    }
    /// The facts of the event, typed, for renderers and JSON (`fact` is what the sentence for a person says).
    public struct Fields: Sendable {
        /// ATT_MTU in force after an MTU exchange.
        public var mtu: Int?
        /// The attribute handle (value handle for subscriptions and values).
        public var handle: UInt16?
        /// The characteristic's UUID when discovery showed it.
        public var uuid: BluetoothUUID?
        /// HCI reason of a disconnection.
        public var reason: UInt8?
        /// What a security event tells: a pairing step, a key, encryption and its outcome.
        public var security: SecurityStep?
        /// The first notification or indication of its value handle (later ones are counted, not told).
        public var firstOfHandle = false
        /// BR/EDR security: the encryption key size (Read Encryption Key Size, Encryption Change v2),
        /// the cipher, the link key type, the Secure Simple Pairing association model.
        public var keySize: UInt8?
        public var cipher: LinkCipher?
        public var linkKey: LinkKeyType?
        public var method: SMP.PairingMethod?
        public init(mtu: Int? = nil, handle: UInt16? = nil, uuid: BluetoothUUID? = nil, reason: UInt8? = nil,
                    security: SecurityStep? = nil, firstOfHandle: Bool = false, keySize: UInt8? = nil, cipher: LinkCipher? = nil,
                    linkKey: LinkKeyType? = nil, method: SMP.PairingMethod? = nil) {
            (self.mtu, self.handle, self.uuid, self.reason) = (mtu, handle, uuid, reason)
            (self.security, self.firstOfHandle) = (security, firstOfHandle)
            (self.keySize, self.cipher, self.linkKey, self.method) = (keySize, cipher, linkKey, method)
        }
    }
    /// The security events of a connection's story (SMP, Core v5.4 Vol 3 Part H; HCI Encryption
    /// Change and Key Refresh Complete, Vol 4 Part E 7.7.8, 7.7.39).
    /// BR/EDR (Vol 4 Part E 7.1.10–7.1.11, 7.7.6, 7.7.24, 7.7.41, 7.5.7): `pairingMethod` when both IO
    /// capabilities are known, `storedKey`/`noStoredKey` the host's answer to Link Key Request,
    /// `linkKey` a new link key, `keySize` the key size read, `pairingDeclined` a negative reply to
    /// User Confirmation / Passkey Request, `authenticationFailed` Authentication Complete's error.
    public enum SecurityStep: String, Sendable {
        case pairingRequested, securityRequested, pairingFailed, keyDistributed
        case encryptionOn, encryptionOff, encryptionFailed, keyRefreshFailed
        case pairingMethod, storedKey, noStoredKey, linkKey, keySize, pairingDeclined, authenticationFailed
        /// Pairing or encryption failed.
        public var failed: Bool { self == .pairingFailed || self == .encryptionFailed || self == .keyRefreshFailed || self == .authenticationFailed }
    }
    public var time: Int64
    public var frame: Int
    public var kind: Kind
    /// What the line says; BLEReport words it (`StoryText`, `TimelineEvent.text`).
    public var fact: StoryFact
    public var fields = Fields()

    public init(time: Int64, frame: Int, kind: Kind, fact: StoryFact) {
        (self.time, self.frame, self.kind, self.fact) = (time, frame, kind, fact)
    }

    public init(time: Int64, frame: Int, kind: Kind, text: String) {
        self.init(time: time, frame: frame, kind: kind, fact: .said(text))
    }
}

/// Notifications or indications of one value handle.
public struct ValueStream: Sendable {
    public var handle: UInt16
    public var notifications = 0
    public var indications = 0
    public var confirmations = 0
    public var bytes = 0
    public var firstFrame = 0
    public var firstTime: Int64 = 0
    public var lastFrame = 0
    public var lastTime: Int64 = 0
    /// Value length of the largest PDU seen.
    public var maxLength = 0
    /// Values that filled ATT_MTU−3 exactly, and values shorter than that, under the MTU of their
    /// time (known MTU only): a stream with short values mixed in is segmented, not cut.
    public var fullValues = 0
    public var shorterValues = 0
    /// Sent by the host (the host is the server).
    public var sentByHost = false
}

/// A CCCD write and what came of it.
public struct Subscription: Sendable {
    public enum Outcome: Sendable, Equatable { case pending, accepted, failed(ATTErrorCode) }
    public var cccdHandle: UInt16
    public var value: UInt16
    public var frame: Int
    public var time: Int64
    public var outcome: Outcome
    /// The host serves the characteristic (the peer subscribed to the phone's own GATT server).
    public var serverIsHost = false
    public var enablesNotify: Bool { value & 1 != 0 }
    public var enablesIndicate: Bool { value & 2 != 0 }
}

/// SMP state of a connection (Core v5.4 Vol 3 Part H), typed: renderers name the reasons and keys.
public struct SMPState: Sendable {
    public var pairingRequests = 0
    /// Pairing Failed commands (3.5.5), with who sent them.
    public var failures: [(frame: Int, reason: SMPFailureReason, sentByHost: Bool)] = []
    public var succeeded = false
    /// Keys distributed in the key distribution phase (3.6), once per key and sender, in order.
    public var keysDistributed: [DistributedKey] = []

    public struct DistributedKey: Sendable, Equatable {
        /// One of `SMP.KeyDistribution.encKey`, `.idKey`, `.signKey`.
        public var key: SMP.KeyDistribution
        public var sentByHost: Bool
    }
}
