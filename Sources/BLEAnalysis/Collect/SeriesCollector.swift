import BLEBytes
import BLECapture
import BLEProtocol

/// The report's series that need more than one connection's view, from the session as frames go
/// by: controller buffers in use per link (against the whole pool), advertising reports,
/// scanning/advertising periods. Per connection traffic is recorded by the session itself
/// (`Connection.activity`, when `recordsActivity` is on), where the buffers end up too.
///
/// Bounded per connection: a capture with more than `detailedConnections` connections is shown
/// summarised (`PageLayout` in BLEReport), so each closed connection's series is then reduced
/// (`ActivitySeries.reduce`): a few KB per connection whatever the capture's size.
struct SeriesCollector {
    /// Connections whose series are kept in full; past this many, closed connections' series are reduced.
    static let detailedConnections = ReportExtras.maxDetailedConnections
    /// Buffers in use per live connection index, sampled over the pass; spread over the link's life
    /// (`BufferSeries`) once its end is known: at its Disconnection Complete, or at the end.
    private var samples: [Int: BufferSamples] = [:]
    /// Connections (positions in `SessionModel.connections`) looked at for reduction so far, and
    /// those of them not reduced yet (still open).
    private var considered = 0
    private var waiting: [Int] = []
    /// Closed connections whose series are kept in full past `detailedConnections`: the worst so far
    /// (`ReportExtras.rank` with the findings known at their close), at most `ReportExtras.fullConnections`.
    private var keptFull: [(connection: Connection, key: [Int64])] = []
    /// Findings so far per connection index, by severity.
    private var findings: [Int: [Severity: Int]] = [:]

    /// A finding the detectors reported (for the ranking of connections).
    mutating func noteFinding(_ f: Finding) {
        if let c = f.connectionIndex { findings[c, default: [:]][f.severity, default: 0] += 1 }
    }
    private var advertisingReports = TimeSamples()
    private var reportsSeen = 0

    /// After the analysis consumed `frame`.
    mutating func frame(_ frame: Frame, session: SessionModel) {
        switch frame.kind {
        case .aclData:
            sampleBuffers(session, time: frame.timestamp)
            // The link the session gave this packet to (an air capture's ACL, made from LL data
            // PDUs, has no times: `airLE` frames).
            if let c = session.activityLink {
                if frame.direction == .received { c.activity.received.add(frame.timestamp) } else { c.activity.sent.add(frame.timestamp) }
            }
        case .event:
            // Buffers come back (Number Of Completed Packets) or are freed with the link.
            if let code = frame.payload.first,
               code == HCIEventCode.numberOfCompletedPackets || code == HCIEventCode.disconnectionComplete {
                sampleBuffers(session, time: frame.timestamp)
                if code == HCIEventCode.disconnectionComplete { closeSeries(session) }
            }
            let total = session.advertisers.totalReports
            while reportsSeen < total { advertisingReports.add(frame.timestamp); reportsSeen += 1 }
        default:
            break
        }
        session.activityLink = nil
    }

    private mutating func sampleBuffers(_ session: SessionModel, time: Int64) {
        for c in session.live.values {
            samples[c.index, default: BufferSamples()].add(time, link: c.buffers.buffersInFlight, pool: session.flow.inUse(isLE: c.isLE))
        }
    }

    /// The series of links that closed (their samples are let go).
    private mutating func closeSeries(_ session: SessionModel) {
        for index in Array(samples.keys) {
            guard let c = session.connection(index), c.lifecycle.disconnectTime != nil else { continue }
            series(of: c, end: 0)
        }
        reduceClosed(session)
    }

    /// Past `detailedConnections`, the closed connections' series are reduced (those still open
    /// wait for a later close).
    private mutating func reduceClosed(_ session: SessionModel) {
        guard session.connectionCount > Self.detailedConnections else { return }
        for c in session.connections.reversed().prefix(while: { $0.index > considered }).reversed() { waiting.append(c.index) }
        considered = max(considered, session.connections.last?.index ?? 0)
        var closed: [Connection] = []
        waiting.removeAll { i in
            guard let c = session.connection(i) else { return true }   // summarised
            guard c.lifecycle.disconnectTime != nil, samples[c.index] == nil else { return false }
            closed.append(c)
            return true
        }
        for c in closed { keepOrReduce(c) }
    }

    /// Keeps `c`'s series in full if it is among the worst so far (the best of those kept is
    /// then reduced), else reduces it.
    private mutating func keepOrReduce(_ c: Connection) {
        let key = ReportExtras.rank(c, findings: findings[c.index] ?? [:])
        guard keptFull.count >= ReportExtras.fullConnections else {
            keptFull.append((c, key))
            return
        }
        guard let best = keptFull.indices.max(by: { keptFull[$0].key.lexicographicallyPrecedes(keptFull[$1].key) }),
              key.lexicographicallyPrecedes(keptFull[best].key) else {
            c.activity.reduce()
            return
        }
        keptFull[best].connection.activity.reduce()
        keptFull[best] = (c, key)
    }

    /// Spreads `c`'s samples over its life (to the capture's `end` when it never closed).
    private mutating func series(of c: Connection, end: Int64) {
        let kept = samples.removeValue(forKey: c.index)
        guard c.activity.buffers == nil, let start = c.barStart else { return }
        var series = BufferSeries(start: start, end: c.lifecycle.disconnectTime ?? max(end, c.traffic.lastDataTime ?? start))
        kept?.replay(into: &series)
        series.close()
        c.activity.buffers = series
    }

    /// - Parameter finalFindings: every finding, counted per connection index and severity.
    mutating func finish(model: SessionModel, end: Int64, finalFindings: [Int: [Severity: Int]], into extras: inout ReportExtras) {
        for c in model.connections {
            series(of: c, end: end)
            c.activity.buffers?.capacity = c.activity.capacity
        }
        if model.connections.count > Self.detailedConnections {
            // The worst with every finding known keep their series in full (those not reduced yet).
            let kept = model.connections.filter { !$0.activity.reduced }
                .map { ($0, ReportExtras.rank($0, findings: finalFindings[$0.index] ?? [:])) }
                .sorted { $0.1.lexicographicallyPrecedes($1.1) }
            for (c, _) in kept.dropFirst(ReportExtras.fullConnections) { c.activity.reduce() }
        }
        extras.advertisingReports = advertisingReports
        extras.radio = model.radio?.finish(end: end) ?? []
        model.radio = nil
    }
}

/// One link's buffer samples in time order, at most `capacity` (6 MiB): past that, neighbours are
/// merged in pairs (first time, highest values, last link value), so a long link costs bounded
/// memory and its chart keeps every peak; a merged pair on a bucket boundary of the final 480
/// buckets lands in the first one's bucket (exact below 262,144 samples, which every capture in
/// the corpus is; 2 bars of a 10M-frame bench capture moved).
struct BufferSamples {
    struct Sample {
        var time: Int64
        var link: Int32
        var pool: Int32
        var lastLink: Int32
    }
    private(set) var samples: [Sample] = []
    static let capacity = 1 << 14

    mutating func add(_ time: Int64, link: Int, pool: Int) {
        let l = Int32(clamping: link)
        samples.append(Sample(time: time, link: l, pool: Int32(clamping: pool), lastLink: l))
        guard samples.count >= Self.capacity else { return }
        var merged: [Sample] = []
        merged.reserveCapacity(Self.capacity)
        var i = 0
        while i < samples.count {
            var s = samples[i]
            if i + 1 < samples.count {
                let n = samples[i + 1]
                s = Sample(time: s.time, link: max(s.link, n.link), pool: max(s.pool, n.pool), lastLink: n.lastLink)
            }
            merged.append(s)
            i += 2
        }
        samples = merged
    }

    func replay(into series: inout BufferSeries) {
        for s in samples { series.record(s.time, link: Int(s.link), pool: Int(s.pool), last: Int(s.lastLink)) }
    }
}
