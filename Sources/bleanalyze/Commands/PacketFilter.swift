import ArgumentParser
import BLEBytes
import BLEAnalysis
import BLECapture
import BLEProtocol

/// Filters for `packets`: protocol layers (OR-ed), frames, a connection and a time range (AND-ed).
struct PacketFilterOptions: ParsableArguments {
    @Option(name: .long, help: "Only this frame (repeatable): go from a finding to its evidence.")
    var frame: [Int] = []
    @Option(name: .long, help: "Only frames A-B (inclusive, 1-based), e.g. --frames 1200-1260.")
    var frames: String?
    @Option(name: .long, help: "With --frame/--frames: also this many frames before and after each selected one.")
    var context: Int = 0
    @Option(name: .long, help: "Only frames of this connection: its number in the report (3), a handle (0x0040, h64), a peer address (C0:FF:EE:00:00:01) or a peer name (advertised or GAP, whole, any case).")
    var conn: String?
    @Flag(name: .long, help: "Frames carrying ATT.") var att = false
    @Flag(name: .long, help: "Frames carrying SMP.") var smp = false
    @Flag(name: .long, help: "Advertising: reports, the advertising set-up commands and their answers, Android's advertising filters, BlueZ advertising mgmt, air advertising packets.") var adv = false
    @Flag(name: .long, help: "HCI commands and events (no data packets).") var hci = false
    @Option(name: .long, help: "Start this many seconds after the first frame.") var since: Double?
    @Option(name: .long, help: "Stop this many seconds after the first frame.") var until: Double?

    var isActive: Bool { conn != nil || att || smp || adv || hci || since != nil || until != nil || !frame.isEmpty || frames != nil }

    /// The connection argument, parsed once: a plain number is the connection's number in the report
    /// (`conn 3`), `0x…` or `h…` a handle, `AA:BB:…` the peer.
    func connectionFilter() throws -> ConnectionFilter? {
        guard let conn else { return nil }
        if let a = BDAddr(string: conn) { return .address(a) }
        let lower = conn.lowercased()
        let handleDigits = lower.hasPrefix("handle:") ? String(lower.dropFirst(7)) : lower.hasPrefix("h") ? String(lower.dropFirst()) : nil
        if lower.hasPrefix("0x") || handleDigits.map({ !$0.isEmpty && $0.allSatisfy(\.isNumber) }) == true {
            let digits = lower.hasPrefix("0x") ? String(lower.dropFirst(2)) : handleDigits ?? ""
            guard let h = UInt16(digits, radix: lower.hasPrefix("0x") ? 16 : 10), h <= 0x0EFF else {
                throw ValidationError("--conn \(conn): a handle is 0x0000–0x0EFF")
            }
            return .handle(h)
        }
        if let index = Int(conn) {
            guard index >= 1 else { throw ValidationError("--conn \(conn): connections are numbered from 1") }
            return .index(index)
        }
        guard !conn.isEmpty else {
            throw ValidationError("--conn takes a connection number (3), a handle (0x0040, h64), a Bluetooth address or a peer name")
        }
        return .name(conn)
    }

    /// The frames selected by --frame/--frames, widened by --context, as sorted closed ranges; nil when
    /// neither is given.
    func frameRanges() throws -> [ClosedRange<Int>]? {
        var ranges: [ClosedRange<Int>] = []
        for n in frame {
            guard n >= 1 else { throw ValidationError("--frame \(n): frames are numbered from 1") }
            ranges.append(n ... n)
        }
        if let frames {
            let parts = frames.split(separator: "-", omittingEmptySubsequences: false)
            guard parts.count == 2, let a = Int(parts[0]), let b = Int(parts[1]), a >= 1, a <= b else {
                throw ValidationError("--frames takes A-B with 1 ≤ A ≤ B, not \(frames)")
            }
            ranges.append(a ... b)
        }
        guard !ranges.isEmpty else {
            if context != 0 { throw ValidationError("--context goes with --frame or --frames") }
            return nil
        }
        guard context >= 0 else { throw ValidationError("--context must be 0 or more") }
        let widened = ranges.map { max(1, $0.lowerBound - context) ... $0.upperBound + context }.sorted { $0.lowerBound < $1.lowerBound }
        var merged: [ClosedRange<Int>] = []
        for r in widened {
            if let last = merged.last, r.lowerBound <= last.upperBound + 1 {
                merged[merged.count - 1] = last.lowerBound ... max(last.upperBound, r.upperBound)
            } else {
                merged.append(r)
            }
        }
        return merged
    }

    /// Rejects filters that can never match, before reading.
    func validate() throws {
        if let since, let until, since > until {
            throw ValidationError("--since \(since) is after --until \(until): the time range is empty")
        }
        if let since, since < 0 { throw ValidationError("--since must be 0 or more") }
    }
}

enum ConnectionFilter {
    case handle(UInt16)
    case address(BDAddr)
    /// The connection's number in the report (1-based order of appearance).
    case index(Int)
    /// The peer's name (advertised or GAP), whole, ignoring case: as `--peer` matches it.
    case name(String)
}

/// Decides, per frame, whether `packets` prints it.
struct PacketFilter {
    let options: PacketFilterOptions
    let connection: ConnectionFilter?
    /// `options.isActive`, read once: argument-parser property wrappers are slow to read per frame.
    private(set) var active: Bool
    private var start: Int64?

    /// Selected frames (--frame/--frames widened by --context), sorted.
    let frameRanges: [ClosedRange<Int>]?
    private var rangeIndex = 0
    /// Frames that passed every filter (for the "nothing matched" error).
    private(set) var matched = 0

    init(_ options: PacketFilterOptions) throws {
        self.options = options
        try options.validate()
        connection = try options.connectionFilter()
        frameRanges = try options.frameRanges()
        active = options.isActive
    }

    /// Why nothing was printed, when the filters matched no frame of a capture that has some: names
    /// what does not exist (exit 2).
    func emptyResultReason(frames total: Int, seconds: Double, session: SessionModel) -> String? {
        guard active, matched == 0, total > 0 else { return nil }
        if let ranges = frameRanges, let first = ranges.first, first.lowerBound > total {
            return "the capture has \(total) frames; frame \(first.lowerBound) does not exist"
        }
        switch connection {
        case let .index(i) where i > session.connectionCount:
            return "the capture has \(session.connectionCount) connection\(session.connectionCount == 1 ? "" : "s"); there is no connection \(i)"
        case let .handle(h) where !session.connections.contains(where: { $0.handle == h }):
            let handles = Set(session.connections.map(\.handle)).sorted().map { "0x" + String($0, radix: 16) }
            return "no connection uses handle 0x\(String(h, radix: 16)) (handles in the capture: \(handles.isEmpty ? "none" : handles.joined(separator: ", ")))"
        case let .address(a) where !session.connections.contains(where: { $0.peerAddress == a }) && !session.advertisers.all.contains(where: { $0.address == a }):
            return "\(a) appears in no connection and no advertising report"
        case let .name(n) where !session.connections.contains(where: PeerScope(n).matches):
            return "no connection to a peer named \(n)"
        default:
            break
        }
        if let since = options.since, since > seconds {
            return "--since \(since) is past the end: the capture lasts \(String(format: "%.1f", seconds)) s"
        }
        return nil
    }

    mutating func accepts(_ analyzed: AnalyzedFrame, layers: [Layer], session: SessionModel) -> Bool {
        guard active else { return true }
        let ok = decide(analyzed, layers: layers, session: session)
        if ok { matched += 1 }
        return ok
    }

    private mutating func decide(_ analyzed: AnalyzedFrame, layers: [Layer], session: SessionModel) -> Bool {
        let frame = analyzed.frame
        if start == nil { start = frame.timestamp }   // the capture's first frame, as `packets -t` counts
        if let ranges = frameRanges {
            while rangeIndex < ranges.count, ranges[rangeIndex].upperBound < frame.number { rangeIndex += 1 }
            guard rangeIndex < ranges.count, ranges[rangeIndex].contains(frame.number) else { return false }
        }
        let t = Double(frame.timestamp - (start ?? frame.timestamp)) / 1e6
        if let since = options.since, t < since { return false }
        if let until = options.until, t > until { return false }
        if let connection, !matches(connection, layers, frame: frame, session: session) { return false }
        let protocols = options.att || options.smp || options.adv || options.hci
        guard protocols else { return true }
        let names = layers.map { $0.protocolName.description }
        if options.att, names.contains("ATT") { return true }
        if options.smp, names.contains("SMP") { return true }
        if options.hci, frame.kind == .command || frame.kind == .event { return true }
        if options.adv, Self.isAdvertising(analyzed) { return true }
        return false
    }

    /// Advertising by code (`AdvertisingTraffic`), never by display name: the command's opcode and
    /// the Command Complete or Command Status that answers it, the LE Meta event's subevent, the
    /// mgmt opcode or event (a monitor's control record: cookie u32, then the u16 code), or an air
    /// packet on the advertising access address.
    static func isAdvertising(_ analyzed: AnalyzedFrame) -> Bool {
        let p = analyzed.frame.payload.reader
        switch analyzed.frame.kind {
        case .command: return HCIPacketHeader.commandOpcode(p).map { AdvertisingTraffic.hciCommands.contains($0.rawValue) } ?? false
        case .event:
            // The command a Command Complete or Command Status answers, the LE Meta event's subevent.
            if let opcode = HCIPacketHeader.answeredOpcode(p) { return AdvertisingTraffic.hciCommands.contains(opcode) }
            return HCIPacketHeader.leSubevent(p).map(AdvertisingTraffic.leMetaSubevents.contains) ?? false
        case .controlCommand: return LogRecords.controlCode(p).map(AdvertisingTraffic.mgmtCommands.contains) ?? false
        case .controlEvent: return LogRecords.controlCode(p).map(AdvertisingTraffic.mgmtEvents.contains) ?? false
        case .airLE: return analyzed.airPacket?.isAdvertising ?? false
        default: return false
        }
    }

    private func matches(_ filter: ConnectionFilter, _ layers: [Layer], frame: Frame, session: SessionModel) -> Bool {
        switch filter {
        case let .index(i):
            // The connection exists once the pass reached its set-up (or first traffic): its handle
            // between its start and its end.
            guard let c = session.connection(i) else { return false }
            if let end = c.lifecycle.disconnectFrame, frame.number > end { return false }
            if frame.number < (c.lifecycle.attemptFrame ?? c.lifecycle.completeFrame ?? 0) { return false }
            return matches(.handle(c.handle), layers, frame: frame, session: session) && frame.adapter == c.adapter
        case let .handle(h):
            return layers.contains { Self.contains($0.fields) { id, value in
                if id == .connectionHandle, case let .integer(v, _) = value { return v == UInt64(h) }
                return false
            } }
        case let .name(n):
            // Names learnt so far (advertising heard before the connection, a GAP name read in it): the
            // frames of connections to that peer, and its advertising.
            let scope = PeerScope(n)
            let addresses = Set(session.connections.filter { scope.matches($0) && $0.adapter == frame.adapter }.compactMap(\.peerAddress)
                                + session.advertisers.all.filter(scope.matches).map(\.address))
            return addresses.contains { matches(.address($0), layers, frame: frame, session: session) }
        case let .address(a):
            let handles = Set(session.connections.filter { $0.peerAddress == a && $0.adapter == frame.adapter }.map(\.handle))
            return layers.contains { Self.contains($0.fields) { id, value in
                if case let .address(x, _) = value { return x == a }
                if id == .connectionHandle, case let .integer(v, _) = value {
                    return handles.contains(UInt16(truncatingIfNeeded: v))
                }
                return false
            } }
        }
    }

    /// Whether any field, at any depth, satisfies `test`.
    static func contains(_ fields: [Field], _ test: (FieldID, FieldValue) -> Bool) -> Bool {
        for f in fields {
            if test(f.id, f.value) { return true }
            switch f.value {
            case let .group(children): if contains(children, test) { return true }
            case let .list(items): if items.contains(where: { contains($0, test) }) { return true }
            default: break
            }
        }
        return false
    }
}
