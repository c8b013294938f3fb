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

    /// Outstanding request sent by the host (index 0) and by the peer (index 1): the oldest one.
    public var outstanding: [Pending?] = [nil, nil]
    /// Requests sent while one was already outstanding (a protocol violation), answered in order
    /// after it; bounded.
    public var queued: [[Pending]] = [[], []]
    static let maxQueued = 8

    /// Every request still waiting for its response, oldest first.
    public var allOutstanding: [Pending] {
        (outstanding.compactMap { $0 } + queued.flatMap { $0 }).sorted { $0.frame < $1.frame }
    }
    /// Unconfirmed indication sent by the host (0) / by the peer (1).
    public var unconfirmedIndication: [Pending?] = [nil, nil]

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
    /// First ATT PDU carrying data (not MTU exchange, not discovery), for `mtu.late-exchange`.
    public var firstDataFrame: Int?
    /// Discovery requests seen (for the "discovery done" story line).
    public var discoveryRequests = 0
    public var discoveryReported = false

    public init() {}

    public var averageLatency: Int64? { responses > 0 ? latencyTotal / Int64(responses) : nil }
}
