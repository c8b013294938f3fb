import BLEBytes
import BLEProtocol

/// The ATT bearer on a connection's fixed channel (CID 0x0004): MTU exchange and the
/// request/response transactions in each direction (Core v5.4 Vol 3 Part F 3.3: one outstanding
/// request per client, one outstanding indication per server).
public struct ATTBearer: Sendable {
    /// A request waiting for its response.
    public struct Pending: Sendable {
        public var opcode: ATTOpcode
        public var handle: UInt16?
        /// Read By Type / Read By Group Type: the attribute type asked for.
        public var type: BluetoothUUID?
        public var offset: UInt16 = 0
        public var valueLength = 0
        public var frame: Int
        public var time: Int64
        /// The host sent it (the host is the client of this transaction).
        public var sentByHost = false
        /// The request as captured is malformed (its L2CAP length lies, or its parameters do not fit
        /// its opcode): a server should answer Error Response Invalid PDU (Core v5.4 Vol 3 Part F 3.4.1.1).
        public var malformed = false
    }

    /// Client Rx MTU from the Exchange MTU Request, and who sent it.
    public var clientMTU: UInt16?
    public var clientIsHost = false
    /// Server Rx MTU from the Exchange MTU Response.
    public var serverMTU: UInt16?
    /// The ATT_MTU in force: min of both once the exchange completed, else 23 (LE default). When the
    /// capture began mid-connection (`mtuKnown` false) it is only a lower bound: the largest PDU seen.
    public var mtu: Int = ATT.defaultLEMTU
    /// False while the ATT_MTU cannot be known: the connection began before the capture, and no
    /// exchange has been seen since. A host never sends a PDU larger than ATT_MTU (Core v5.4 Vol 3
    /// Part F 3.2.8), so the largest PDU seen in either direction is a lower bound.
    public var mtuKnown = true
    /// The largest ATT PDU seen on the bearer (opcode included), either direction.
    public var largestPDU = 0
    /// The ATT_MTU when the capture shows it, nil when it is only bounded below.
    public var knownMTU: Int? { mtuKnown ? mtu : nil }
    public var mtuFrame: Int?
    /// Frame of the last Exchange MTU Request.
    public var lastMTURequestFrame: Int?
    public var mtuTime: Int64?

    /// The two ends of a link, named (the host whose log this is, and the peer).
    public enum Side: Sendable, Equatable {
        case host, peer
        public var other: Side { self == .host ? .peer : .host }
        /// The side that sent a PDU the capture shows as sent (host → controller) or received.
        public static func sender(sent: Bool) -> Side { sent ? .host : .peer }
    }

    /// One side's requests as a client: the oldest waiting for its response, and those sent while it
    /// was outstanding (a protocol violation, answered in order after it; bounded).
    public struct Requests: Sendable {
        public var outstanding: Pending?
        public var queued: [Pending] = []
    }
    public private(set) var hostRequests = Requests()
    public private(set) var peerRequests = Requests()
    static let maxQueued = 8
    /// The indication each side sent that is still waiting for its confirmation.
    public private(set) var hostIndication: Pending?
    public private(set) var peerIndication: Pending?

    /// The oldest request of `side` still waiting for its response.
    public func outstanding(from side: Side) -> Pending? { side == .host ? hostRequests.outstanding : peerRequests.outstanding }

    /// Every request still waiting for its response, oldest first.
    public var allOutstanding: [Pending] {
        ([hostRequests.outstanding, peerRequests.outstanding].compactMap { $0 } + hostRequests.queued + peerRequests.queued)
            .sorted { $0.frame < $1.frame }
    }

    /// A request sent by `side`; returns the request of that side already outstanding (the sequential
    /// protocol broken, Core v5.4 Vol 3 Part F 3.3.2), if any.
    public mutating func request(_ p: Pending, from side: Side) -> Pending? {
        requests += 1
        if side == .host { hostLastRequestFrame = p.frame } else { peerLastRequestFrame = p.frame }
        return update(side) { r in
            let overlapping = r.outstanding
            if r.outstanding == nil { r.outstanding = p } else if r.queued.count < Self.maxQueued { r.queued.append(p) }
            return overlapping
        }
    }

    /// `side`'s requests changed in place: a copy taken out and stored back retained its queue
    /// twice per request and response.
    private mutating func update<T>(_ side: Side, _ body: (inout Requests) -> T) -> T {
        side == .host ? body(&hostRequests) : body(&peerRequests)
    }

    /// A response (or Error Response) to `requester`'s oldest request: pairs and returns it (nil when
    /// nothing was outstanding), counting the latency. An Error Response names the opcode of the
    /// request in error (Request Opcode In Error, Core v5.4 Vol 3 Part F 3.4.1.1): on a client that
    /// sent several requests at once it answers the oldest of that opcode, not the oldest of all.
    public mutating func answer(requester side: Side, at time: Int64, error: Bool = false, requestOpcode: ATTOpcode? = nil) -> Pending? {
        guard let p = take(requester: side, opcode: requestOpcode) else { return nil }
        responses += 1
        latencyTotal += time - p.time
        latencyMax = max(latencyMax, time - p.time)
        requestStats.record(p, answeredAt: time, error: error)
        return p
    }

    /// Removes `requester`'s oldest request without an answer (a response the sniffer lost).
    /// With `opcode`, the oldest request of that opcode when the oldest of all is another one.
    @discardableResult
    public mutating func take(requester side: Side, opcode: ATTOpcode? = nil) -> Pending? {
        update(side) { r in
            guard let p = r.outstanding else { return nil }
            if let opcode, p.opcode != opcode, let i = r.queued.firstIndex(where: { $0.opcode == opcode }) {
                return r.queued.remove(at: i)
            }
            r.outstanding = r.queued.isEmpty ? nil : r.queued.removeFirst()
            return p
        }
    }

    /// The indication `side` sent that is still unconfirmed.
    public func unconfirmedIndication(from side: Side) -> Pending? { side == .host ? hostIndication : peerIndication }

    /// `side` sent an indication (the server may not send another until it is confirmed).
    public mutating func indicate(_ p: Pending, from side: Side) {
        if side == .host { hostIndication = p } else { peerIndication = p }
    }

    /// The other side confirmed `sender`'s indication; returns it.
    @discardableResult
    public mutating func confirm(indicationFrom sender: Side) -> Pending? {
        defer { if sender == .host { hostIndication = nil } else { peerIndication = nil } }
        return unconfirmedIndication(from: sender)
    }

    /// The last request each side sent (frame; 0 before its first).
    public private(set) var hostLastRequestFrame = 0
    public private(set) var peerLastRequestFrame = 0
    public func lastRequestFrame(from side: Side) -> Int { side == .host ? hostLastRequestFrame : peerLastRequestFrame }
    /// The last frame in each direction on this link whose L2CAP or ATT content could not be decoded
    /// (a request may be in it); 0 when none.
    public var undecodedSentFrame = 0
    public var undecodedReceivedFrame = 0
    /// The last undecodable frame that `side` sent.
    public func undecodedFrame(from side: Side) -> Int { side == .host ? undecodedSentFrame : undecodedReceivedFrame }
    mutating func noteUndecoded(_ frame: Int, sent: Bool) {
        if sent { undecodedSentFrame = frame } else { undecodedReceivedFrame = frame }
    }
    /// An ATT PDU in each direction whose start fragment came and whose L2CAP length is not complete
    /// yet: its opcode and start frame (a server answering it answered a PDU that claims more bytes
    /// than were sent). Cleared when a PDU of that direction is delivered.
    public var partialSent: (opcode: UInt8, frame: Int)?
    public var partialReceived: (opcode: UInt8, frame: Int)?

    /// The last Service Changed indication (its handle range, Core v5.4 Vol 3 Part G 7.1) or Database Out Of
    /// Sync error (0x12, 2.5.2.1: the whole database) on this bearer.
    public var serviceChanged: ServiceChange?

    public var requests = 0
    public var responses = 0
    public var errors = 0
    public var latencyTotal: Int64 = 0
    public var latencyMax: Int64 = 0
    public var pdusSent = 0
    public var pdusReceived = 0
    /// A long read in progress (Read then Read Blob on one handle): bytes and requests so far.
    public var longRead: (handle: UInt16, bytes: Int, requests: Int, frame: Int)?
    /// Prepared writes queued before Execute Write: bytes and requests so far, per first handle.
    public var preparedWrite: (handle: UInt16, bytes: Int, requests: Int, frame: Int)?
    /// First ATT PDU carrying data (not MTU exchange, not discovery, not GATT configuration: a CCCD
    /// write or the host's own Service Changed indication), for `mtu.late-exchange`.
    public var firstDataFrame: Int?
    /// Exchange MTU Requests seen on the bearer (either side).
    public var mtuRequests = 0
    /// Exchange MTU Requests the host sent (as a client) and the peer sent: each side may be a client
    /// and exchange once (Core v5.4 Vol 3 Part F 3.4.2.1), so a second one from the same side is a new
    /// connection (`SessionModel.newSessionIfReused`).
    public var mtuRequestsByHost = 0
    public var mtuRequestsByPeer = 0
    /// `firstDataFrame` when the first Exchange MTU Request came, if the data before it flowed at the
    /// default ATT_MTU (23, known: the set-up is in the capture). Nil for a second request (a client
    /// sends it once, Core v5.4 Vol 3 Part F 3.4.2.1) or an MTU already larger.
    public var dataBeforeFirstExchange: Int?
    /// 2-byte writes of 0x0001/0x0002 to handles no discovery on this connection described: a client
    /// with cached handles (iOS reconnecting) subscribes by writing the CCCD at value handle + 1
    /// without discovering it. Each becomes a subscription when the first value of handle − 1 arrives
    /// (bounded).
    public var presumedCCCDWrites: [(handle: UInt16, value: UInt16, frame: Int, time: Int64, serverIsHost: Bool)] = []
    static let maxPresumedCCCDWrites = 8
    /// Discovery requests seen (for the "discovery done" story line).
    public var discoveryRequests = 0
    public var discoveryReported = false
    /// What discovery on this connection found, per table (the peer's, the host's own).
    public struct Discovered: Sendable { public var services = 0, characteristics = 0, descriptors = 0 }
    public var discoveredPeer = Discovered()
    public var discoveredLocal = Discovered()
    mutating func discovered(serverIsHost: Bool, _ body: (inout Discovered) -> Void) {
        if serverIsHost { body(&discoveredLocal) } else { body(&discoveredPeer) }
    }
    /// The last response to a discovery request (where the "discovery" story line is stamped).
    public var lastDiscoveryResponse: (frame: Int, time: Int64)?

    /// The capture clock's step on this bearer: the largest of 1, 10, …, 1,000,000 µs dividing every
    /// ATT PDU's timestamp (PacketLogger logs milliseconds, some loggers whole seconds). A latency
    /// below it is "< 1 ms", not "0 µs".
    public private(set) var clockStep: Int64 = 1_000_000
    @inline(__always) mutating func observeClock(_ time: Int64) {
        while clockStep > 1, time % clockStep != 0 { clockStep /= 10 }
    }

    /// What the application did on this bearer: answered requests per (client side, opcode, handle).
    public var requestStats = RequestStats()

    public init() {}

    public var averageLatency: Int64? { responses > 0 ? latencyTotal / Int64(responses) : nil }
}

/// The server told the client its database changed over `range`: a Service Changed indication or a
/// Database Out Of Sync error (`outOfSync`). The client must discover the range again before using its
/// handles (Core v5.4 Vol 3 Part G 2.5.2).
public struct ServiceChange: Sendable, Equatable {
    public var range: ClosedRange<UInt16>
    public var frame: Int
    public var time: Int64
    /// The host is the client told of the change (the peer is the server).
    public var clientIsHost: Bool
    public var outOfSync: Bool
}
