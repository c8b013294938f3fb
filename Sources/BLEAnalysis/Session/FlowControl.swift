import BLEProtocol

/// Controller-to-host flow control for ACL data (Core v5.4 Vol 4 Part E 4.1.1): the host may have at
/// most `Total_Num_(LE_)ACL_Data_Packets` packets in the controller; Number Of Completed Packets
/// gives buffers back. LE links use the LE buffers unless the controller reports 0 of them, in which
/// case they share the BR/EDR ones.
public struct FlowControl: Sendable {
    public var leBuffers: BufferSize?
    public var aclBuffers: BufferSize?
    /// Sum over LE links / BR/EDR links (per link: `Connection.buffersInFlight`).
    public var leInFlight = 0
    public var aclInFlight = 0
    public var peakLEInFlight = 0

    /// Buffers the host may fill for a link of this transport, when known.
    public func capacity(isLE: Bool) -> Int? {
        if isLE, let le = leBuffers, le.aclPackets > 0 { return Int(le.aclPackets) }
        return aclBuffers.map { Int($0.aclPackets) }
    }

    /// LE links count against the LE pool unless the controller has none (shared pool).
    func usesLEPool(isLE: Bool) -> Bool { isLE && (leBuffers?.aclPackets ?? 1) > 0 }

    mutating func sent(_ c: Connection) {
        c.buffers.buffersInFlight += 1
        if usesLEPool(isLE: c.isLE) {
            leInFlight += 1
            peakLEInFlight = max(peakLEInFlight, leInFlight)
        } else {
            aclInFlight += 1
        }
    }

    /// Returns how many of `count` were actually outstanding (a controller may over-report).
    @inline(__always)
    mutating func completed(_ c: Connection, count: Int) -> Int {
        let n = min(c.buffers.buffersInFlight, count)
        c.buffers.buffersInFlight -= n
        if usesLEPool(isLE: c.isLE) { leInFlight = max(0, leInFlight - n) } else { aclInFlight = max(0, aclInFlight - n) }
        return n
    }

    /// On disconnect the controller flushes the link's packets (they are returned implicitly).
    mutating func dropLink(_ c: Connection) -> Int {
        let n = c.buffers.buffersInFlight
        c.buffers.buffersInFlight = 0
        if usesLEPool(isLE: c.isLE) { leInFlight = max(0, leInFlight - n) } else { aclInFlight = max(0, aclInFlight - n) }
        return n
    }

    public func inUse(isLE: Bool) -> Int { usesLEPool(isLE: isLE) ? leInFlight : aclInFlight }
}

/// Host packets awaiting completion, oldest first: an array with a moving head, so completing the
/// oldest packets costs no shifting. Bounded: a host that never gets completions stops tracking.
struct SentQueue: Sendable {
    private var items: [SentPacket] = []
    private var head = 0
    static let limit = 4096

    var isEmpty: Bool { head >= items.count }
    var all: [SentPacket] { Array(items[head...]) }
    var first: SentPacket? { head < items.count ? items[head] : nil }
    var count: Int { items.count - head }

    mutating func append(_ p: SentPacket) {
        guard items.count - head < Self.limit else { return }
        items.append(p)
    }

    mutating func removeFirst(_ n: Int) {
        head = min(items.count, head + n)
        if head > 1024, head * 2 > items.count {
            items.removeFirst(head)
            head = 0
        }
        if head == items.count { items.removeAll(keepingCapacity: true); head = 0 }
    }

    mutating func removeAll() { items.removeAll(); head = 0 }
}
