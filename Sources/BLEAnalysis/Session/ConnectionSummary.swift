import BLEBytes
import BLEProtocol

/// How much of a long session the pass keeps whole (issue 32, docs/LIVE.md "Memory"): past
/// `finishedConnections` finished connections, the oldest whose end is decided are summarised
/// (`ConnectionRetirement`): the model keeps a `ConnectionSummary` row in place of the
/// `Connection` (its story, database use, transfer and counters let go), and the detectors decide
/// what they would decide of it at the end.
public struct SummaryPolicy: Sendable {
    /// Finished connections kept whole; nil: all (a capture of any length is kept whole).
    public var finishedConnections: Int? = 1000
    /// Info findings of summarised connections kept per rule; past it they are counted
    /// (`DetectorEngine.summarisedInfo`).
    public var infoFindingsPerRule = 100
    /// Warnings and errors of summarised connections kept per rule; past it they are counted
    /// (`DetectorEngine.summarisedProblems`): a session that loses a link every minute for days
    /// keeps a thousand of them, and the count of the rest.
    public var problemsPerRule = 1000
    /// Summary rows kept (`SessionModel.summarised`, the newest); the older ones are only counted,
    /// with how they ended (`SessionModel.foldedRows`).
    public var rows = 10_000
    /// The places summarised connections' findings leave in `DetectorEngine.findings` are given back
    /// (`FindingMoves`) once this many are empty and they are half of the list.
    public var compactAfter = 4096
    public init() {}
}

/// A finished connection as the report lists it once summarised: the row of `connections[]` without
/// its story, transfer or database (docs/report-schema.json, `summarised: true`).
public struct ConnectionSummary: Sendable {
    public var index: Int
    public var adapter: UInt16
    public var handle: UInt16
    public var isLE: Bool
    public var role: Connection.Role
    public var peerAddress: BDAddr?
    public var peerAddressType: LEAddressType?
    public var peerName: String?
    public var completeFrame: Int?
    public var completeTime: Int64?
    public var disconnectFrame: Int?
    public var disconnectTime: Int64?
    public var disconnectReason: HCIStatus?
    public var intervalUnits: UInt16
    public var latency: UInt16
    public var timeoutUnits: UInt16
    public var mtu: Int
    public var mtuKnown: Bool
    public var aclSent: Int
    public var aclReceived: Int
    public var attRequests: Int
    public var attResponses: Int
    public var attLatencyAverage: Int64?
    public var attLatencyMax: Int64
    /// What ended it (`Connection.endCause`), when the capture shows it.
    public var endCause: FindingCause.Kind?

    /// The row of `c` as it is now (the JSON report writes every row through it).
    public init(_ c: Connection) {
        index = c.index; adapter = c.adapter; handle = c.handle; isLE = c.isLE; role = c.role
        peerAddress = c.peerAddress; peerAddressType = c.peerAddressType; peerName = c.peerName
        completeFrame = c.lifecycle.completeFrame; completeTime = c.lifecycle.completeTime
        disconnectFrame = c.lifecycle.disconnectFrame; disconnectTime = c.lifecycle.disconnectTime
        disconnectReason = c.lifecycle.disconnectReason
        intervalUnits = c.link.intervalUnits; latency = c.link.latency; timeoutUnits = c.link.timeoutUnits
        mtu = c.att.mtu; mtuKnown = c.att.mtuKnown
        aclSent = c.traffic.aclSent; aclReceived = c.traffic.aclReceived
        attRequests = c.att.requests; attResponses = c.att.responses
        attLatencyAverage = c.att.averageLatency; attLatencyMax = c.att.latencyMax
        endCause = c.endCause?.cause.kind
    }

    /// As `Connection.peerLabel`.
    public var peerLabel: String { Connection.peerLabel(name: peerName, address: peerAddress, handle: handle) }
    public var intervalMillis: Double { Double(intervalUnits) * 1.25 }
}

extension SessionModel {
    /// Connections seen, summarised or not.
    public var connectionCount: Int { connections.count + summarised.count + foldedRows.count }

    /// The connection with this 1-based index, while the model holds it whole (nil once summarised).
    public func connection(_ index: Int) -> Connection? {
        // Held connections are in index order: the newest first, then a bisection.
        guard let last = connections.last, index >= 1, index <= last.index else { return nil }
        if connections.count >= index, connections[index - 1].index == index { return connections[index - 1] }
        let i = connections.prefixEnd { $0.index < index }
        return i < connections.count && connections[i].index == index ? connections[i] : nil
    }

    /// The summary of a summarised connection.
    public func summary(_ index: Int) -> ConnectionSummary? {
        let i = summarised.prefixEnd { $0.index < index }
        return i < summarised.count && summarised[i].index == index ? summarised[i] : nil
    }

    /// Replaces the finished connection `c` by its summary (`ConnectionRetirement`, after the
    /// detectors retired it). Names it first as the end would (`resolvePeerNames`).
    func summarise(_ c: Connection) {
        name(c)
        guard let i = connections.firstIndex(where: { $0 === c }) else { return }
        connections.remove(at: i)
        freeSlots.append(c.slot)
        let row = ConnectionSummary(c)
        // Summarised in end order, listed in index order.
        var at = summarised.count
        while at > 0, summarised[at - 1].index > row.index { at -= 1 }
        summarised.insert(row, at: at)
        if let db = c.peerGATT, db.servedConnections.last != c.index { db.servedConnections.append(c.index) }
        if activityLink === c { activityLink = nil }
    }

    /// Past `rows`, the oldest summary rows are only counted (`foldedRows`).
    func foldRows(keeping rows: Int) {
        let excess = summarised.count - rows
        guard excess > 0 else { return }
        for r in summarised.prefix(excess) {
            foldedRows.count += 1
            foldedRows.ends[r.disconnectReason?.rawValue ?? 0xFF, default: 0] += 1
            if r.disconnectReason != nil, let frame = r.disconnectFrame, foldedRows.firstEnds.count < FoldedRows.maxKept {
                foldedRows.firstEnds.append((frame, r.disconnectTime))
            }
            if let a = r.peerAddress, foldedRows.peers.count < FoldedRows.maxPeers { foldedRows.peers.insert(a) }
            if let db = r.peerAddress.flatMap({ databases[$0.description] }) { db.servedConnections.removeAll { $0 == r.index } }
        }
        summarised.removeFirst(excess)
    }
}

/// Summarised connections no longer listed as rows (the oldest, past `SummaryPolicy.rows`).
public struct FoldedRows: Sendable {
    public internal(set) var count = 0
    /// How they ended: HCI reason → count (0xFF: a handle reused, no Disconnection Complete).
    public internal(set) var ends: [UInt8: Int] = [:]
    /// The first 50 Disconnection Completes among them (`link.disconnect-summary`'s evidence), and
    /// their peers (at most 10,000).
    public internal(set) var firstEnds: [(frame: Int, time: Int64?)] = []
    public internal(set) var peers = Set<BDAddr>()
    static let maxKept = 50
    static let maxPeers = 10_000
}
