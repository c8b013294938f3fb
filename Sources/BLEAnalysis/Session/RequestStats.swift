import BLEProtocol
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The application's ATT requests on one bearer, answered ones only, counted per client side,
/// request opcode and attribute handle: how many, how many got an Error Response, and the time to
/// the answer (Core v5.4 Vol 3 Part F 3.3.2: a client has one request outstanding, so the answer
/// that follows is this request's). Discovery and the MTU exchange are told elsewhere (the
/// discovery and MTU story lines) and not counted here. Bounded: at most `maxEntries` keys.
public struct RequestStats: Sendable {
    public struct Entry: Sendable {
        public var opcode: ATTOpcode
        public var handle: UInt16?
        /// The host was the client.
        public var sentByHost: Bool
        public var count = 0
        public var errors = 0
        public var latencyTotal: Int64 = 0
        public var latencyMax: Int64 = 0
        public var firstFrame: Int
        public var firstTime: Int64
    }

    public private(set) var entries: [Entry] = []
    /// Answers not counted because `entries` was full.
    public private(set) var uncounted = 0
    static let maxEntries = 64
    /// The entry the last answer went to: an app repeats the same request, so most answers hit it.
    private var last = 0

    /// Answer times per client side and kind (reads; writes: Write Request, Prepare/Execute Write),
    /// for the median and p95 `diff` compares: index `LatencyKind.index(host:writes:)`.
    public private(set) var latencies = [LatencyDistribution](repeating: LatencyDistribution(), count: 4)

    public init() {}

    /// The answer times of the requests a side made: reads, or writes (their completions).
    public func latency(clientIsHost: Bool, writes: Bool) -> LatencyDistribution {
        latencies[(clientIsHost ? 0 : 2) + (writes ? 1 : 0)]
    }

    /// At the link's end: `entries` kept at its length (it grew by doubling while the link was up).
    mutating func compact() {
        if entries.capacity > entries.count { entries = entries.withUnsafeBufferPointer { Array($0) } }
    }

    mutating func record(_ p: ATTBearer.Pending, answeredAt time: Int64, error: Bool) {
        guard Self.isApplication(p.opcode) else { return }
        let i: Int
        func matches(_ e: Entry) -> Bool { e.opcode == p.opcode && e.handle == p.handle && e.sentByHost == p.sentByHost }
        if last < entries.count, matches(entries[last]) {
            i = last
        } else if let found = entries.firstIndex(where: matches) {
            i = found
        } else {
            guard entries.count < Self.maxEntries else { uncounted += 1; return }
            entries.append(Entry(opcode: p.opcode, handle: p.handle, sentByHost: p.sentByHost, firstFrame: p.frame, firstTime: p.time))
            i = entries.count - 1
        }
        last = i
        let latency = max(0, time - p.time)
        latencies[(p.sentByHost ? 0 : 2) + (Self.isWrite(p.opcode) ? 1 : 0)].add(latency, frame: p.frame)
        entries[i].count += 1
        if error { entries[i].errors += 1 }
        entries[i].latencyTotal += latency
        entries[i].latencyMax = max(entries[i].latencyMax, latency)
    }

    static func isWrite(_ op: ATTOpcode) -> Bool {
        op == .writeRequest || op == .prepareWriteRequest || op == .executeWriteRequest
    }

    /// Requests an application makes (reads and writes), not discovery or the MTU exchange.
    static func isApplication(_ op: ATTOpcode) -> Bool {
        switch op {
        case .readRequest, .readBlobRequest, .readMultipleRequest, .readMultipleVariableRequest, .writeRequest,
             .prepareWriteRequest, .executeWriteRequest:
            true
        default:
            false   // discovery (Read By Type too), the MTU exchange
        }
    }
}

/// A distribution of answer times in bounded memory: buckets 5 % wide on a log scale (1 µs to hours
/// in under 500 buckets), so a median or p95 is known within 5 %; the maximum exactly, with the
/// frame of the request that waited longest.
public struct LatencyDistribution: Sendable, Equatable {
    public private(set) var count = 0
    public private(set) var max: Int64 = 0
    /// The request that waited longest.
    public private(set) var maxFrame = 0
    public private(set) var total: Int64 = 0
    /// Bucket → answers; bucket 0 holds 0 µs, bucket i ≥ 1 holds [1.05^(i-1), 1.05^i).
    private var buckets: [Int: Int] = [:]
    static let step = log(1.05)

    public init() {}

    mutating func add(_ micros: Int64, frame: Int) {
        count += 1
        total += micros
        if micros > max || count == 1 { max = micros; maxFrame = frame }
        let i = micros <= 0 ? 0 : Int(log(Double(micros)) / Self.step) + 1
        buckets[i, default: 0] += 1
    }

    /// The answer time at quantile `q` (0.5: median; nearest rank), as its bucket's middle, never
    /// above the maximum; nil without answers.
    public func quantile(_ q: Double) -> Int64? {
        guard count > 0 else { return nil }
        let rank = Swift.max(1, Int((q * Double(count)).rounded(.up)))
        var seen = 0
        for (i, n) in buckets.sorted(by: { $0.key < $1.key }) {
            seen += n
            if seen >= rank {
                if i == 0 { return 0 }
                return Swift.min(max, Int64(exp((Double(i) - 0.5) * Self.step).rounded()))
            }
        }
        return max
    }

    public var median: Int64? { quantile(0.5) }
    public var p95: Int64? { quantile(0.95) }
}
