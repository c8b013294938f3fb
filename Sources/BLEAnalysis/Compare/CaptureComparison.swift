import BLEBytes
import BLEProtocol

/// `bleanalyze diff BEFORE AFTER`: two captures of the same device and scenario compared point by
/// point (docs/DIFF.md). Peers are paired by what names a device across captures (identity
/// address, name, a public or static address, GATT table, manufacturer data), never by a private
/// address; their connections in order; then set-up, parameters, GATT table, traffic, answer
/// times and findings, each with the frames on both sides. Typed: BLEReport words it.
public struct CaptureComparison: Sendable {
    /// How two peers were taken for the same device, the strongest first.
    public enum Match: String, Sendable {
        case identityAddress = "identity-address"
        case name
        case address
        case gatt = "gatt-table"
        case manufacturer = "manufacturer-data"
        /// The only peer left unpaired on each side (a redacted copy: new name and address).
        case onlyPeer = "only-peer"
        /// Seen on one side only.
        case none
    }

    /// What a change of a value means for the device's behaviour.
    public enum Verdict: String, Sendable { case same, better, worse, changed }

    /// A measured value (micros, a count, a parameter) on both sides.
    public enum Metric: String, Sendable, CaseIterable {
        case connect, discover, subscribe, encrypt
        case mtu, interval, latency, timeout, finalInterval = "final-interval", finalLatency = "final-latency",
             finalTimeout = "final-timeout", phy, dataLength = "data-length", pairing, secureConnections = "secure-connections",
             keySize = "key-size", disconnect

        /// Whether larger is better, worse, or neither.
        var largerIs: Verdict {
            switch self {
            case .connect, .discover, .subscribe, .encrypt: .worse
            case .mtu, .phy, .dataLength, .keySize: .better
            default: .changed
            }
        }
    }

    public enum Value: Sendable, Equatable {
        case micros(Int64)
        case number(Int)
        case text(String)
    }

    public struct Change: Sendable {
        public var metric: Metric
        public var before: Value?
        public var after: Value?
        public var beforeFrame: Int?
        public var afterFrame: Int?
        public var verdict: Verdict
    }

    /// Application data one way: before and after.
    public struct TrafficChange: Sendable {
        public var sentByHost: Bool
        public var before: TransferDirection
        public var after: TransferDirection
        /// Bytes per second (nil: under two PDUs).
        public var rateVerdict: Verdict
    }

    /// Answer times of one kind of request.
    public struct LatencyChange: Sendable {
        public enum Kind: String, Sendable { case hostReads = "host-reads", hostWrites = "host-writes", peerReads = "peer-reads", peerWrites = "peer-writes" }
        public var kind: Kind
        public var before: LatencyDistribution
        public var after: LatencyDistribution
        /// The median grew beyond the threshold.
        public var slower: Bool
        /// What changed on the link that makes an answer take longer (typed; empty: nothing seen).
        public var because: [Reason]
    }

    /// Why answers or transfers took longer: the link facts that changed.
    public enum Reason: Sendable, Equatable {
        case interval(before: Int, after: Int)          // 1.25 ms units
        case latency(before: Int, after: Int)
        case phy(before: Int, after: Int)
        case mtu(before: Int, after: Int)
        case dataLength(before: Int, after: Int)
        /// Writes that wait for an answer (Write Request) instead of Write Commands.
        case writeRequests(before: Int, after: Int)
        case limitedBy(before: [TransferLimit], after: [TransferLimit])
    }

    public struct ConnectionPair: Sendable {
        public var before: CaptureProfile.ConnectionProfile?
        public var after: CaptureProfile.ConnectionProfile?
        public var changes: [Change]
        public var traffic: [TrafficChange]
        public var latencies: [LatencyChange]
        public var trafficReasons: [Reason]
    }

    public enum GATTChange: Sendable, Equatable {
        case serviceAdded(BluetoothUUID, frame: Int)
        case serviceRemoved(BluetoothUUID, frame: Int)
        case characteristicAdded(service: BluetoothUUID, BluetoothUUID, properties: UInt8, frame: Int)
        case characteristicRemoved(service: BluetoothUUID, BluetoothUUID, properties: UInt8, frame: Int)
        case propertiesChanged(service: BluetoothUUID, BluetoothUUID, before: UInt8, after: UInt8, beforeFrame: Int, afterFrame: Int)
        case descriptorAdded(service: BluetoothUUID, characteristic: BluetoothUUID, BluetoothUUID, frame: Int)
        case descriptorRemoved(service: BluetoothUUID, characteristic: BluetoothUUID, BluetoothUUID, frame: Int)
    }

    public struct PeerPair: Sendable {
        public var before: CaptureProfile.Peer?
        public var after: CaptureProfile.Peer?
        public var match: Match
        public var connections: [ConnectionPair]
        /// nil: a side's table is unknown (no discovery), so nothing is compared.
        public var gatt: [GATTChange]?
        public var label: String { after?.label ?? before?.label ?? "unknown peer" }
    }

    /// The findings of one rule about one peer and attribute, on both sides.
    public struct FindingChange: Sendable {
        public enum Kind: String, Sendable { case new, gone, changed, same }
        public var kind: Kind
        public var rule: String
        public var peer: String
        public var handle: UInt16?
        public var before: [Finding]
        public var after: [Finding]
        public var beforeSeverity: Severity? { before.map(\.severity).max() }
        public var afterSeverity: Severity? { after.map(\.severity).max() }
    }

    /// What `--fail-on regression` counts.
    public enum Regression: Sendable {
        case newFinding(FindingChange)
        case findingGrew(FindingChange)
        case slower(peer: String, connection: Int, LatencyChange)
        case gattChanged(peer: String, GATTChange)
    }

    /// Options of the judgement.
    public struct Options: Sendable {
        /// A median is slower when it grew by more than this fraction…
        public var slowerFraction: Double = 0.25
        /// …and by more than this many micros (answers jitter by a connection event).
        public var slowerFloorMicros: Int64 = 2_000
        public var allowGATTChange = false
        public init() {}
    }

    public var peers: [PeerPair]
    public var findings: [FindingChange]
    public var regressions: [Regression]
    public let options: Options

    public init(before: CaptureProfile, after: CaptureProfile, options: Options = Options()) {
        self.options = options
        peers = Self.pair(before.peers, after.peers).map { b, a, m in
            let count = max(b?.connections.count ?? 0, a?.connections.count ?? 0)
            let conns = (0 ..< count).map { i in
                Self.compare(i < (b?.connections.count ?? 0) ? b?.connections[i] : nil,
                             i < (a?.connections.count ?? 0) ? a?.connections[i] : nil, options)
            }
            var gatt: [GATTChange]?
            if let tb = b?.gatt, let ta = a?.gatt { gatt = Self.compare(tb, ta) }
            return PeerPair(before: b, after: a, match: m, connections: conns, gatt: gatt)
        }
        findings = Self.compareFindings(before, after, peers)
        var regressions: [Regression] = []
        for f in findings {
            guard let a = f.afterSeverity, a >= .warning else { continue }
            switch f.kind {
            case .new: regressions.append(.newFinding(f))
            case .changed where a > (f.beforeSeverity ?? .info) || f.after.count > f.before.count: regressions.append(.findingGrew(f))
            default: break
            }
        }
        for p in peers {
            for c in p.connections { for l in c.latencies where l.slower { regressions.append(.slower(peer: p.label, connection: c.after?.index ?? 0, l)) } }
            if !options.allowGATTChange { for g in p.gatt ?? [] { regressions.append(.gattChanged(peer: p.label, g)) } }
        }
        self.regressions = regressions
    }

    // MARK: Peers

    /// Pairs peers, strongest evidence first; each peer is used once.
    static func pair(_ before: [CaptureProfile.Peer], _ after: [CaptureProfile.Peer])
        -> [(CaptureProfile.Peer?, CaptureProfile.Peer?, Match)] {
        var left = Array(before.indices), right = Array(after.indices)
        var pairs: [(Int?, Int?, Match)] = []
        let tests: [(Match, (CaptureProfile.Peer, CaptureProfile.Peer) -> Bool)] = [
            (.identityAddress, { a, b in a.identityAddress != nil && a.identityAddress == b.identityAddress }),
            (.name, { a, b in a.name != nil && a.name?.lowercased() == b.name?.lowercased() }),
            (.address, { a, b in a.stableAddress != nil && a.stableAddress == b.stableAddress }),
            (.gatt, { a, b in !(a.gatt?.signature.isEmpty ?? true) && a.gatt?.signature == b.gatt?.signature }),
            // A capture that began mid-connection knows part of the table: every service it saw, beside
            // Generic Access and Generic Attribute (every server has them), is in the other's.
            (.gatt, { a, b in
                guard let x = a.gatt?.deviceServices, let y = b.gatt?.deviceServices, !x.isEmpty, !y.isEmpty else { return false }
                return x.isSubset(of: y) || y.isSubset(of: x)
            }),
            (.manufacturer, { a, b in !a.companies.isEmpty && a.companies == b.companies }),
        ]
        for (match, test) in tests {
            for i in left {
                guard let j = right.first(where: { test(before[i], after[$0]) }) else { continue }
                pairs.append((i, j, match))
                left.removeAll { $0 == i }
                right.removeAll { $0 == j }
            }
        }
        if left.count == 1, right.count == 1 {
            pairs.append((left[0], right[0], .onlyPeer))
            left = []; right = []
        }
        pairs += left.map { ($0, nil, .none) } + right.map { (nil, $0, .none) }
        // In the order of the after capture, then peers that are gone.
        pairs.sort { ($0.1 ?? Int.max, $0.0 ?? Int.max) < ($1.1 ?? Int.max, $1.0 ?? Int.max) }
        return pairs.map { b, a, m in (b.map { before[$0] }, a.map { after[$0] }, m) }
    }

    // MARK: Connections

    static func compare(_ b: CaptureProfile.ConnectionProfile?, _ a: CaptureProfile.ConnectionProfile?, _ options: Options) -> ConnectionPair {
        var changes: [Change] = []
        func add<T>(_ m: Metric, _ x: CaptureProfile.Seen<T>?, _ y: CaptureProfile.Seen<T>?, _ value: (T) -> Value) {
            guard x != nil || y != nil else { return }
            let bv = x.map { value($0.value) }, av = y.map { value($0.value) }
            changes.append(Change(metric: m, before: bv, after: av, beforeFrame: x?.frame, afterFrame: y?.frame, verdict: verdict(m, bv, av)))
        }
        let micros: (Int64) -> Value = { .micros($0) }
        let number: (Int) -> Value = { .number($0) }
        add(.connect, b?.toConnect, a?.toConnect, micros)
        add(.discover, b?.toDiscover, a?.toDiscover, micros)
        add(.subscribe, b?.toSubscribe, a?.toSubscribe, micros)
        add(.encrypt, b?.toEncrypt, a?.toEncrypt, micros)
        add(.mtu, b?.mtu, a?.mtu, number)
        let p = { (k: KeyPath<StoryFact.LinkParameters, UInt16>) in { (s: CaptureProfile.Seen<StoryFact.LinkParameters>?) in
            s.map { CaptureProfile.Seen(Int($0.value[keyPath: k]), frame: $0.frame) } } }
        add(.interval, p(\.interval)(b?.parameters), p(\.interval)(a?.parameters), number)
        add(.latency, p(\.latency)(b?.parameters), p(\.latency)(a?.parameters), number)
        add(.timeout, p(\.timeout)(b?.parameters), p(\.timeout)(a?.parameters), number)
        if b?.finalParameters != b?.parameters || a?.finalParameters != a?.parameters {
            add(.finalInterval, p(\.interval)(b?.finalParameters), p(\.interval)(a?.finalParameters), number)
            add(.finalLatency, p(\.latency)(b?.finalParameters), p(\.latency)(a?.finalParameters), number)
            add(.finalTimeout, p(\.timeout)(b?.finalParameters), p(\.timeout)(a?.finalParameters), number)
        }
        add(.phy, b?.phy, a?.phy, number)
        add(.dataLength, b?.dataLength, a?.dataLength, number)
        add(.pairing, b?.pairing, a?.pairing) { .text($0.rawValue) }
        if b?.secureConnections != nil || a?.secureConnections != nil {
            let f = { (c: CaptureProfile.ConnectionProfile?) in c?.secureConnections.map { CaptureProfile.Seen($0 ? 1 : 0, frame: c?.pairing?.frame) } }
            add(.secureConnections, f(b), f(a)) { .text($0 == 1 ? "LE Secure Connections" : "legacy") }
        }
        add(.keySize, b?.keySize, a?.keySize, number)
        add(.disconnect, b?.disconnect, a?.disconnect) { .number(Int($0.rawValue)) }

        var traffic: [TrafficChange] = []
        var latencies: [LatencyChange] = []
        var reasons: [Reason] = []
        if let b, let a {
            reasons = linkReasons(b, a)
            for host in [true, false] {
                let x = host ? b.sent : b.received, y = host ? a.sent : a.received
                guard x.pdus + y.pdus > 0 else { continue }
                var v = Verdict.same
                if let r0 = x.bytesPerSecond, let r1 = y.bytesPerSecond, r0 > 0 {
                    v = r1 < r0 * (1 - options.slowerFraction) ? .worse : r1 > r0 * (1 + options.slowerFraction) ? .better : .same
                }
                traffic.append(TrafficChange(sentByHost: host, before: x, after: y, rateVerdict: v))
            }
            let kinds: [(LatencyChange.Kind, KeyPath<CaptureProfile.ConnectionProfile, LatencyDistribution>)] =
                [(.hostReads, \.hostReads), (.hostWrites, \.hostWrites), (.peerReads, \.peerReads), (.peerWrites, \.peerWrites)]
            for (kind, path) in kinds {
                let x = b[keyPath: path], y = a[keyPath: path]
                guard x.count + y.count > 0 else { continue }
                var slower = false
                if let m0 = x.median, let m1 = y.median {
                    slower = Double(m1) > Double(m0) * (1 + options.slowerFraction) && m1 - m0 > options.slowerFloorMicros
                }
                latencies.append(LatencyChange(kind: kind, before: x, after: y, slower: slower, because: slower ? reasons : []))
            }
        }
        return ConnectionPair(before: b, after: a, changes: changes, traffic: traffic, latencies: latencies, trafficReasons: reasons)
    }

    /// The link facts that differ and make answers or transfers slower.
    static func linkReasons(_ b: CaptureProfile.ConnectionProfile, _ a: CaptureProfile.ConnectionProfile) -> [Reason] {
        var r: [Reason] = []
        let i0 = Int(b.finalParameters?.value.interval ?? 0), i1 = Int(a.finalParameters?.value.interval ?? 0)
        if i1 > i0, i0 > 0 { r.append(.interval(before: i0, after: i1)) }
        let l0 = Int(b.finalParameters?.value.latency ?? 0), l1 = Int(a.finalParameters?.value.latency ?? 0)
        if l1 > l0 { r.append(.latency(before: l0, after: l1)) }
        let m0 = b.mtu?.value ?? ATT.defaultLEMTU, m1 = a.mtu?.value ?? ATT.defaultLEMTU
        if m1 < m0 { r.append(.mtu(before: m0, after: m1)) }
        if let p0 = b.phy?.value, let p1 = a.phy?.value, p0 != p1 { r.append(.phy(before: p0, after: p1)) }
        let d0 = b.dataLength?.value ?? LinkBudget.defaultOctets, d1 = a.dataLength?.value ?? LinkBudget.defaultOctets
        if d1 < d0 { r.append(.dataLength(before: d0, after: d1)) }
        let w0 = b.sent.writeRequests + b.received.writeRequests, w1 = a.sent.writeRequests + a.received.writeRequests
        if w1 > w0 { r.append(.writeRequests(before: w0, after: w1)) }
        let host0 = b.sent.limitedBy, host1 = a.sent.limitedBy
        if host0 != host1, !host1.isEmpty { r.append(.limitedBy(before: host0, after: host1)) }
        return r
    }

    static func verdict(_ m: Metric, _ b: Value?, _ a: Value?) -> Verdict {
        guard let b, let a else { return b == nil && a == nil ? .same : .changed }
        if b == a { return .same }
        func n(_ v: Value) -> Int64? {
            switch v { case let .micros(x): x; case let .number(x): Int64(x); case .text: nil }
        }
        guard let x = n(b), let y = n(a) else { return .changed }
        switch m.largerIs {
        case .worse:
            // Times: within a connection event (7.5 ms) or 25 % is the same.
            if abs(y - x) <= 7_500 || Double(abs(y - x)) <= 0.25 * Double(max(x, y)) { return .same }
            return y > x ? .worse : .better
        case .better: return y > x ? .better : .worse
        default: return .changed
        }
    }

    // MARK: GATT

    static func compare(_ b: CaptureProfile.GATTTable, _ a: CaptureProfile.GATTTable) -> [GATTChange] {
        var out: [GATTChange] = []
        // Services by UUID and occurrence (a table may hold the same service twice).
        func keyed<T>(_ items: [T], _ uuid: (T) -> BluetoothUUID) -> [Occurrence: T] {
            var seen: [BluetoothUUID: Int] = [:], out: [Occurrence: T] = [:]
            for x in items { let u = uuid(x); let n = seen[u, default: 0]; seen[u] = n + 1; out[Occurrence(uuid: u, n: n)] = x }
            return out
        }
        let sb = keyed(b.services, \.uuid), sa = keyed(a.services, \.uuid)
        for s in b.services where sa[key(s, in: b.services)] == nil { out.append(.serviceRemoved(s.uuid, frame: s.frame)) }
        for s in a.services {
            guard let old = sb[key(s, in: a.services)] else { out.append(.serviceAdded(s.uuid, frame: s.frame)); continue }
            let cb = keyed(old.characteristics, \.uuid), ca = keyed(s.characteristics, \.uuid)
            for c in old.characteristics where ca[key(c, in: old.characteristics)] == nil {
                out.append(.characteristicRemoved(service: s.uuid, c.uuid, properties: c.properties, frame: c.frame))
            }
            for c in s.characteristics {
                guard let oc = cb[key(c, in: s.characteristics)] else {
                    out.append(.characteristicAdded(service: s.uuid, c.uuid, properties: c.properties, frame: c.frame)); continue
                }
                if oc.properties != c.properties {
                    out.append(.propertiesChanged(service: s.uuid, c.uuid, before: oc.properties, after: c.properties, beforeFrame: oc.frame, afterFrame: c.frame))
                }
                for d in oc.descriptors where !c.descriptors.contains(d) {
                    out.append(.descriptorRemoved(service: s.uuid, characteristic: c.uuid, d, frame: oc.frame))
                }
                for d in c.descriptors where !oc.descriptors.contains(d) {
                    out.append(.descriptorAdded(service: s.uuid, characteristic: c.uuid, d, frame: c.frame))
                }
            }
        }
        return out
    }

    /// A UUID and which of its occurrences (a table may hold the same service twice). UUIDs compare
    /// by value: 0xFFE0 and 0000ffe0-0000-1000-8000-00805f9b34fb are one.
    struct Occurrence: Hashable { var uuid: BluetoothUUID, n: Int }

    private static func key(_ s: CaptureProfile.GATTTable.Service, in all: [CaptureProfile.GATTTable.Service]) -> Occurrence {
        Occurrence(uuid: s.uuid, n: all.prefix { $0 != s }.filter { $0.uuid == s.uuid }.count)
    }

    private static func key(_ c: CaptureProfile.GATTTable.Characteristic, in all: [CaptureProfile.GATTTable.Characteristic]) -> Occurrence {
        Occurrence(uuid: c.uuid, n: all.prefix { $0 != c }.filter { $0.uuid == c.uuid }.count)
    }

    // MARK: Findings

    /// Findings grouped by rule, peer (as the pairing names it) and attribute handle.
    static func compareFindings(_ before: CaptureProfile, _ after: CaptureProfile, _ peers: [PeerPair]) -> [FindingChange] {
        // A connection's finding is about the pair its connection belongs to.
        var nameBefore: [Int: String] = [:], nameAfter: [Int: String] = [:]
        for p in peers {
            for c in p.before?.connections ?? [] { nameBefore[c.index] = p.label }
            for c in p.after?.connections ?? [] { nameAfter[c.index] = p.label }
        }
        struct Key: Hashable { var rule: String, peer: String, handle: UInt16? }
        func key(_ f: Finding, _ names: [Int: String]) -> Key {
            Key(rule: f.rule, peer: f.connectionIndex.flatMap { names[$0] } ?? f.peerName ?? "-", handle: f.handle)
        }
        var order: [Key] = []
        var b: [Key: [Finding]] = [:], a: [Key: [Finding]] = [:]
        for f in before.findings { let k = key(f, nameBefore); if b[k] == nil, a[k] == nil { order.append(k) }; b[k, default: []].append(f) }
        for f in after.findings { let k = key(f, nameAfter); if b[k] == nil, a[k] == nil { order.append(k) }; a[k, default: []].append(f) }
        return order.map { k in
            let x = b[k] ?? [], y = a[k] ?? []
            let kind: FindingChange.Kind
            if x.isEmpty { kind = .new } else if y.isEmpty { kind = .gone } else {
                let causes = { (fs: [Finding]) in fs.map { $0.cause?.kind.rawValue ?? "" }.sorted() }
                let same = x.count == y.count && x.map(\.severity).max() == y.map(\.severity).max() && causes(x) == causes(y)
                kind = same ? .same : .changed
            }
            return FindingChange(kind: kind, rule: k.rule, peer: k.peer, handle: k.handle, before: x, after: y)
        }
    }
}

