import BLEBytes
import BLEProtocol

/// What the HTML report needs beyond the session model, gathered during the one analysis pass
/// (`EvidenceCollector`): the frames around each finding decoded, the times of evidence frames,
/// controller buffers in use per connection, scanning/advertising periods and captured ATT values.
public struct ReportExtras: Sendable {
    /// One frame decoded btmon-style.
    public struct DecodedFrame: Sendable {
        public var number: Int
        public var time: Int64
        public var text: String
    }

    /// A period in which the host had scanning or advertising enabled.
    public struct RadioPeriod: Sendable {
        public enum Kind: String, Sendable { case scanning, advertising }
        public var kind: Kind
        public var adapter: UInt16
        public var start: Int64
        public var end: Int64
        public var frame: Int
    }

    /// An ATT value carried by an evidence frame (Read Response, notification, write), first bytes.
    public struct CapturedValue: Sendable {
        public var opcode: UInt8
        public var length: Int
        public var bytes: [UInt8]
        public var mtu: Int

        /// The PDUs whose value is shown (`ATT.valueStart` says where it starts).
        static let shown: Set<ATTOpcode> = [.readResponse, .readBlobResponse, .handleValueNotification, .handleValueIndication,
                                            .writeRequest, .writeCommand]

        /// Bytes of a value shown at most.
        static let maxBytes = 64

        /// The value of an ATT Read (Blob) Response, notification, indication or write in a complete
        /// L2CAP PDU on the fixed ATT channel (Core v5.4 Vol 3 Part F 3.4.4.4 / 3.4.4.6 / 3.4.7 /
        /// 3.4.5): after the opcode for a read response, after the handle for the others.
        init?(pdu: ByteReader, mtu: Int) {
            var r = pdu
            guard let header = try? L2CAP.BasicHeader.read(&r), header.channel == L2CAP.ChannelID.att,
                  let code = r.peekU8(), Self.shown.contains(ATTOpcode(code)), let start = ATT.valueStart(ATTOpcode(code)) else { return nil }
            opcode = code
            length = max(0, r.remaining - start)
            bytes = r.remaining > start ? Array(r.remainingBytes[start ..< min(r.remaining, start + Self.maxBytes)]) : []
            self.mtu = mtu
        }
    }

    /// Frames decoded around the evidence, in frame order.
    public var frames: [DecodedFrame] = []
    /// Time of every evidence frame.
    public var frameTimes: [Int: Int64] = [:]
    public var radio: [RadioPeriod] = []
    /// Times of advertising reports (thinned to at most `TimeSamples.capacity`).
    public var advertisingReports = TimeSamples()
    /// ATT values of evidence frames, by frame number.
    public var values: [Int: CapturedValue] = [:]
    /// Frames shown on each side of an evidence frame.
    public var around = 3

    public init() {}

    /// Connections whose series (`Connection.activity`) are kept in full: a capture with more is
    /// shown summarised (peer groups, the worst connections in full), and each closed connection's
    /// series is reduced to a few KB (`ActivitySeries.reduce`).
    public static let maxDetailedConnections = 60
    /// Connections a summarised page shows in full, worst first (`worse`); their series are kept in full.
    public static let fullConnections = 30

    /// Ordering key of a connection, worst first (lexicographically smaller is worse): the most
    /// severe findings (`findings`: its findings counted by severity), then how many, then a failed
    /// link (never completed, or ended by a link loss), then the shortest, then the first.
    public static func rank(_ c: Connection, findings: [Severity: Int]) -> [Int64] {
        var key: [Int64] = Severity.allCases.reversed().map { -Int64(findings[$0] ?? 0) }
        key.append(failed(c) ? 0 : 1)
        key.append(duration(c) ?? .max)
        key.append(Int64(c.index))
        return key
    }

    /// The connection never completed, or a link loss ended it.
    public static func failed(_ c: Connection) -> Bool {
        if c.lifecycle.completeTime == nil && c.startTime == nil { return true }
        if let r = c.lifecycle.disconnectReason, LinkLoss.reasons.contains(r.rawValue) { return true }
        return false
    }

    /// From its start to its disconnect (or last data), nil when it never started.
    public static func duration(_ c: Connection) -> Int64? {
        guard let start = c.startTime else { return nil }
        return (c.lifecycle.disconnectTime ?? c.traffic.lastDataTime ?? start) - start
    }

    /// The evidence span of a finding: the earliest and latest time of its frames.
    public func span(_ f: Finding) -> (Int64, Int64) {
        let times = f.frames.compactMap { frameTimes[$0] } + [f.time]
        return (times.min() ?? f.time, times.max() ?? f.time)
    }
}

/// Controller ACL buffers in use on one link over its life: `count` buckets (480, fewer once
/// reduced) from `start` to `end`, each with the most buffers this link held and the most the whole
/// pool held (UInt16: a controller has at most 65,535 buffers, Core v5.4 Vol 4 Part E 7.4.5).
public struct BufferSeries: Sendable {
    public let start: Int64
    public let end: Int64
    public private(set) var link: [UInt16]
    public private(set) var pool: [UInt16]
    /// While recording: buckets in which a value was recorded (the others carry the previous
    /// bucket's last value) and that last value; let go by `close()`.
    var touched: [Bool]
    var last: [UInt16]
    public var capacity: Int?
    public static let count = 480
    /// Buckets of this series.
    public var buckets: Int { link.count }

    init(start: Int64, end: Int64) {
        self.start = start
        self.end = max(end, start + 1)
        link = Array(repeating: 0, count: Self.count)
        pool = link
        last = link
        touched = Array(repeating: false, count: Self.count)
    }

    func bucket(_ t: Int64) -> Int {
        let i = Int((Double(t - start) / Double(end - start) * Double(Self.count)).rounded(.down))
        return min(max(i, 0), Self.count - 1)
    }

    /// Recording is over: only the buckets are kept.
    mutating func close() {
        touched = []
        last = []
    }

    /// Merges neighbouring buckets (highest values kept) down to at most `n`.
    mutating func reduce(to n: Int) {
        close()
        guard link.count > n, n > 0 else { return }
        let per = (link.count + n - 1) / n
        func merge(_ a: [UInt16]) -> [UInt16] { stride(from: 0, to: a.count, by: per).map { a[$0 ..< min($0 + per, a.count)].max() ?? 0 } }
        link = merge(link)
        pool = merge(pool)
    }

    /// - Parameter lastValue: the link's buffers after the sample (`v` unless samples were merged).
    mutating func record(_ t: Int64, link v: Int, pool p: Int, last lastValue: Int? = nil) {
        let i = bucket(t)
        if !touched[i] { fill(through: i) }
        touched[i] = true
        link[i] = max(link[i], UInt16(clamping: v))
        pool[i] = max(pool[i], UInt16(clamping: p))
        last[i] = UInt16(clamping: lastValue ?? v)
    }

    /// Carries the last value into untouched buckets up to `i` (a link holds its buffers until
    /// Number Of Completed Packets returns them).
    private mutating func fill(through i: Int) {
        var j = i - 1
        while j >= 0 && !touched[j] { j -= 1 }
        guard j >= 0 else { return }
        let carry = last[j]
        for k in (j + 1) ..< i {
            touched[k] = true
            link[k] = carry
            pool[k] = max(pool[k], carry)
            last[k] = carry
        }
    }

    public var peak: Int { Int(link.max() ?? 0) }
}

/// Up to `capacity` event times, evenly thinned when there are more (every 2nd, 4th, …).
public struct TimeSamples: Sendable {
    public private(set) var times: [Int64] = []
    /// Each kept time stands for `stride` events.
    public private(set) var stride = 1
    public private(set) var total = 0
    public static let capacity = 4096

    public init() {}

    /// Keeps every 2nd, 4th, … time until at most `n` are left, and lets go of spare capacity.
    mutating func thin(to n: Int) {
        while times.count > n {
            times = times.enumerated().filter { $0.offset % 2 == 0 }.map(\.element)
            stride *= 2
        }
        if times.capacity > times.count { times = times.withUnsafeBufferPointer { Array($0) } }
    }

    mutating func add(_ t: Int64) {
        total += 1
        guard (total - 1) % stride == 0 else { return }
        times.append(t)
        if times.count >= Self.capacity {
            times = times.enumerated().filter { $0.offset % 2 == 0 }.map(\.element)
            stride *= 2
        }
    }
}
