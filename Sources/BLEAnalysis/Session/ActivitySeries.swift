/// A connection's activity over time, for the HTML report's charts, recorded only when
/// `SessionModel.recordsActivity` is on (`EvidenceCollector`): per bucket ACL packets, bytes,
/// notifications/writes and buffers in use (fixed-width buckets that double in width when full, so a
/// connection of any length keeps at most `maxBuckets` of them); the times of its ACL packets
/// (thinned, for the timeline's traffic); and, once its end is known, controller buffers in use over
/// its life (`buffers`, from `SeriesCollector`). The timeline and the connection's chart read this
/// one series. `reduce()` shrinks a closed connection's series when the capture has more connections
/// than a page shows one by one, so what is kept per connection stays small.
public struct ActivitySeries: Sendable {
    public struct Bucket: Sendable, Equatable {
        public var aclSent = 0
        public var aclReceived = 0
        public var bytesSent = 0
        public var bytesReceived = 0
        /// Notifications and indications (either direction).
        public var values = 0
        /// Write Commands and Write Requests (either direction).
        public var writes = 0
        /// Most controller ACL buffers in use at any time in the bucket.
        public var maxBuffersInUse = 0
        /// Application data (attribute values, `Connection.transfer`) sent and received, bytes.
        public var valueBytesSent = 0
        public var valueBytesReceived = 0

        mutating func merge(_ o: Bucket) {
            aclSent += o.aclSent; aclReceived += o.aclReceived
            bytesSent += o.bytesSent; bytesReceived += o.bytesReceived
            values += o.values; writes += o.writes
            valueBytesSent += o.valueBytesSent; valueBytesReceived += o.valueBytesReceived
            maxBuffersInUse = max(maxBuffersInUse, o.maxBuffersInUse)
        }
    }

    public static let maxBuckets = 512
    /// Time of the first bucket (µs since the epoch).
    public private(set) var start: Int64?
    /// Width of every bucket, µs; starts at 10 ms.
    public private(set) var width: Int64 = 10_000
    public private(set) var buckets: [Bucket] = []
    /// Controller buffers available to this connection's transport, when known.
    public var capacity: Int?
    /// Times of ACL packets the host sent and received (thinned when there are many).
    public internal(set) var sent = TimeSamples()
    public internal(set) var received = TimeSamples()
    /// Controller ACL buffers in use over the connection's life (nil until its end is known).
    public internal(set) var buffers: BufferSeries?

    public init() {}

    /// The last bucket used and its time span: consecutive packets nearly always land in it, so
    /// most calls skip the division.
    private var lastIndex = 0
    private var lastFrom: Int64 = 1, lastUntil: Int64 = 0

    /// The bucket for `time`, growing (and coarsening) the series as needed.
    mutating func index(_ time: Int64) -> Int? {
        if time >= lastFrom, time < lastUntil { return lastIndex }
        guard let i = slowIndex(time) else { return nil }
        if let s = start, time >= s {
            lastIndex = i
            lastFrom = s + Int64(i) * width
            lastUntil = lastFrom + width
        }
        return i
    }

    private mutating func slowIndex(_ time: Int64) -> Int? {
        if start == nil { start = time }
        guard let s = start, time >= s else { return buckets.isEmpty ? nil : 0 }
        var i = Int((time - s) / width)
        while i >= Self.maxBuckets {
            coarsen()
            i = Int((time - s) / width)
        }
        if i >= buckets.count { buckets.append(contentsOf: repeatElement(Bucket(), count: i - buckets.count + 1)) }
        return i
    }

    private mutating func coarsen() {
        var merged: [Bucket] = []
        merged.reserveCapacity(buckets.count / 2 + 1)
        var i = 0
        while i < buckets.count {
            var b = buckets[i]
            if i + 1 < buckets.count { b.merge(buckets[i + 1]) }
            merged.append(b)
            i += 2
        }
        buckets = merged
        width *= 2
        lastFrom = 1; lastUntil = 0   // the cached span is stale
    }

    /// Buckets, times and buffer buckets kept per connection once reduced.
    static let reducedBuckets = 32
    static let reducedTimes = 256
    static let reducedBufferBuckets = 48
    /// The series was reduced (`reduce()`).
    public private(set) var reduced = false

    /// Shrinks the series to the reduced sizes (coarser buckets, fewer times) and lets go of spare
    /// capacity: for a closed connection of a capture with more connections than a page details.
    mutating func reduce() {
        reduced = true
        while buckets.count > Self.reducedBuckets { coarsen() }
        if buckets.capacity > buckets.count { buckets = buckets.withUnsafeBufferPointer { Array($0) } }
        sent.thin(to: Self.reducedTimes)
        received.thin(to: Self.reducedTimes)
        buffers?.reduce(to: Self.reducedBufferBuckets)
    }

    mutating func record(_ time: Int64, _ update: (inout Bucket) -> Void) {
        guard let i = index(time) else { return }
        update(&buckets[i])
    }
}
