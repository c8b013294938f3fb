import BLEProtocol

/// Controller-to-host flow control for ACL data (Core v5.4 Vol 4 Part E 4.1.1): the host may have at
/// most `Total_Num_(LE_)ACL_Data_Packets` packets in the controller; Number Of Completed Packets
/// gives buffers back. LE links use the LE buffers unless the controller reports 0 of them, in which
/// case they share the BR/EDR ones.
public struct FlowControl: Sendable {
    public var leBuffers: BufferSize?
    public var aclBuffers: BufferSize?
    /// Packets sent and not yet completed, per link.
    public var inFlight: [LinkKey: Int] = [:]
    /// Sum over LE links / BR/EDR links.
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

    mutating func sent(_ key: LinkKey, isLE: Bool) {
        inFlight[key, default: 0] += 1
        if usesLEPool(isLE: isLE) {
            leInFlight += 1
            peakLEInFlight = max(peakLEInFlight, leInFlight)
        } else {
            aclInFlight += 1
        }
    }

    /// Returns how many of `count` were actually outstanding (a controller may over-report).
    mutating func completed(_ key: LinkKey, isLE: Bool, count: Int) -> Int {
        let outstanding = inFlight[key] ?? 0
        let n = min(outstanding, count)
        inFlight[key] = outstanding - n
        if usesLEPool(isLE: isLE) { leInFlight = max(0, leInFlight - n) } else { aclInFlight = max(0, aclInFlight - n) }
        return n
    }

    /// On disconnect the controller flushes the link's packets (they are returned implicitly).
    mutating func dropLink(_ key: LinkKey, isLE: Bool) -> Int {
        let n = inFlight.removeValue(forKey: key) ?? 0
        if usesLEPool(isLE: isLE) { leInFlight = max(0, leInFlight - n) } else { aclInFlight = max(0, aclInFlight - n) }
        return n
    }

    public func inUse(isLE: Bool) -> Int { usesLEPool(isLE: isLE) ? leInFlight : aclInFlight }
}
