import BLEBytes
import BLEAnalysis
import BLECapture
import BLEProtocol

/// What a twin needs from a recording: which device it plays (the peer of one connection), how
/// that device advertised, its attribute table, and the story of the connection (every L2CAP PDU
/// both ways, in order). Built from the recording's units (`Script`) and one analysis pass
/// (connections, GATT database, advertisers).
public struct TwinRecording: Sendable {
    /// How the device advertised, from the advertising reports the recording's host received.
    public struct Advertising: Sendable {
        public var data: [UInt8] = []
        public var scanResponse: [UInt8]?
        /// Reports came as extended (non-legacy) PDUs.
        public var extended = false
        public var connectable = true
        /// Median gap between reports, µs (an upper bound of the interval, as heard).
        public var intervalMicros: Int64?
    }

    /// A key the recording's central started encryption with (LE Enable Encryption, Core v5.4 Vol 4
    /// Part E 7.8.24): the twin answers its controller's LE Long Term Key Request with it.
    public struct RecordedKey: Sendable {
        public var random: [UInt8]
        public var ediv: UInt16
        public var key: [UInt8]
        public var frame: Int
    }

    public var path: String
    public var device: BDAddr
    public var deviceType: LEAddressType
    /// The recorded connection the story comes from: handle, frames.
    public var handle: UInt16
    public var firstFrame: Int
    public var advertising: Advertising?
    public var table: AttributeTable
    public var story: TwinStory
    public var keys: [RecordedKey] = []
    /// The recorded connections to the device the story covers (each played in turn: the twin
    /// advertises again after each disconnection while later ones remain).
    public var connectionCount = 1
    /// Per recorded connection: how long after the central's last PDU the device ended it (µs),
    /// when the device did (a reason other than the central's own host terminating it:
    /// Remote User Terminated, a link loss…); nil when the central ended it or it stayed open.
    public var deviceEnds: [Int64?] = []
    /// The device's link was open before the log starts (no connection complete: its address is
    /// not recorded): the twin takes `openBeforeLogAddress`, and a replay makes the connection.
    public var openBeforeLog = false
    /// The random static address a twin of a link open before the log takes (the device's is not
    /// in the log).
    public static let openBeforeLogAddress = BDAddr(0xC0FF_EE00_0001)
    /// What was chosen and why, for stderr.
    public var notes: [String]

    public enum Failure: Error, Sendable, CustomStringConvertible {
        case input(String)
        public var description: String { if case let .input(m) = self { return m }; return "" }
    }

    /// Reads `path` and picks the device: `device`, the peer `named` chooses (the CLI's peer-name
    /// match: `name` for messages, `matches` on each connection), or the peer of the connection with
    /// the most ATT traffic.
    public static func load(path: String, device: BDAddr?,
                            named: (name: String, matches: (Connection) -> Bool)? = nil) throws(Failure) -> TwinRecording {
        let recording: Recording
        do { recording = try Recording.load(path: path) } catch { throw .input(error.description) }
        let script = Script(recording)
        let analyzer = Analyzer()
        do {
            let file = try CaptureFile(path: path)
            _ = file.read { analyzer.consume($0) }
            _ = analyzer.finish()
        } catch { throw .input(error.description) }

        // ATT PDUs per connection (handle + frame range; a handle is reused by later connections).
        func attCount(_ c: Connection) -> Int {
            let from = c.lifecycle.completeFrame ?? 0, to = c.lifecycle.disconnectFrame ?? Int.max
            return script.units.reduce(0) { n, u in
                guard case let .l2cap(h, pdu) = u.content, h == c.handle, TwinPDU.channel(pdu) == .att,
                      u.frame >= from, u.frame <= to else { return n }
                return n + 1
            }
        }
        var candidates = analyzer.session.connections.filter { $0.isLE && $0.peerAddress != nil && (device == nil || $0.peerAddress == device)
                                                                && (named?.matches($0) ?? true) }
        // No connection complete in the log, but ATT on a link open before it starts: that link's
        // device, at an address of the twin's own (the recorded one is not in the log).
        var openBeforeLog = false
        if candidates.isEmpty, device == nil, named == nil,
           let open = analyzer.session.connections.filter({ $0.lifecycle.completeFrame == nil && $0.peerAddress == nil && attCount($0) > 0 }).max(by: { attCount($0) < attCount($1) }) {
            candidates = [open]
            openBeforeLog = true
        }
        guard !candidates.isEmpty else {
            throw .input(device.map { "\(path): no LE connection to \($0) in the recording" }
                         ?? named.map { "\(path): no LE connection to a peer named \($0.name) in the recording" }
                         ?? "\(path): no LE connection in the recording")
        }
        let counted = candidates.map { ($0, attCount($0)) }
        guard let (chosen, count) = counted.max(by: { $0.1 < $1.1 || ($0.1 == $1.1 && $0.0.index > $1.0.index) }),
              let address = chosen.peerAddress ?? (openBeforeLog ? Self.openBeforeLogAddress : nil) else { throw .input("\(path): no connection to play") }
        var notes: [String] = []
        if openBeforeLog {
            notes.append("the recording has no LE connection complete: connection #\(chosen.index) (handle 0x\(String(chosen.handle, radix: 16)), \(count) ATT PDUs) was open before the log starts; the twin plays its device at \(address) (the device's address is not in the log)")
        }
        if device == nil, !openBeforeLog {
            let others = Set(candidates.compactMap(\.peerAddress)).subtracting([address]).count
            notes.append("playing \(address) (\(chosen.peerLabel)), the peer of connection #\(chosen.index) with \(count) ATT PDUs"
                         + (others > 0 ? "; \(others) other device\(others == 1 ? "" : "s") in the recording (--device picks one)" : ""))
        }
        guard chosen.role != .peripheral else {
            throw .input("\(path): the recording's host was the peripheral of its connection to \(address): peer plays the remote device of a central's capture")
        }
        let db = chosen.peerGATT ?? analyzer.session.databases[address.description]
        var table = AttributeTable(db)
        if table.isEmpty { notes.append("no GATT discovery of \(address) in the recording: the twin serves an empty database") }

        // Every connection of the central to the device, in order: the story plays them in turn.
        let played = openBeforeLog ? [chosen] : candidates.filter { $0.peerAddress == address && $0.role != .peripheral }
            .sorted { ($0.lifecycle.completeFrame ?? 0) < ($1.lifecycle.completeFrame ?? 0) }
        let ranges = played.map { (handle: $0.handle, from: $0.lifecycle.completeFrame ?? 0, to: $0.lifecycle.disconnectFrame ?? Int.max) }
        let from = ranges.first?.from ?? chosen.lifecycle.completeFrame ?? 0
        let story = TwinStory(connections: ranges.map { r in
            script.units.filter { u in
                guard case let .l2cap(h, _) = u.content else { return false }
                return h == r.handle && u.frame >= r.from && u.frame <= r.to
            }
        }, centralIsHost: true)
        if ranges.count > 1 { notes.append("the recording has \(ranges.count) connections to \(address): the twin plays them in turn, advertising again after each disconnection") }

        table.notFoundHandle = story.notFoundHandle
        if table.notFoundHandle != .start { notes.append("the device names the \(table.notFoundHandle == .end ? "ending handle" : "handle after the range") in its Attribute Not Found answers, not the starting one: the twin does too") }

        var advertising = Self.advertising(of: address, in: script, before: from)
        if let a = analyzer.session.advertisers.all.first(where: { $0.address == address }) {
            advertising?.intervalMicros = a.intervalEstimate
        }
        // The LE Enable Encryption commands on this connection, decoded by the analysis's decoder.
        let keys: [RecordedKey] = script.units.compactMap { u in
            guard case let .command(b) = u.content else { return nil }
            return b.withUnsafeBytes { raw -> RecordedKey? in
                var r = ByteReader(raw, base: 0)
                guard case let .enableEncryption(handle, key?)? = try? HCICommand.decode(&r),
                      ranges.contains(where: { $0.handle == handle && u.frame >= $0.from && u.frame <= $0.to }) else { return nil }
                return RecordedKey(random: Array(b[key.random.offset ..< key.random.offset + key.random.count]), ediv: key.ediv,
                                   key: Array(b[key.longTermKey.offset ..< key.longTermKey.offset + key.longTermKey.count]), frame: u.frame)
            }
        }
        var twin = TwinRecording(path: path, device: address, deviceType: openBeforeLog ? .randomDevice : chosen.peerAddressType ?? .publicDevice, handle: played.first?.handle ?? chosen.handle,
                                 firstFrame: from, advertising: advertising, table: table, story: story, keys: keys, notes: notes)
        twin.connectionCount = max(1, ranges.count)
        twin.openBeforeLog = openBeforeLog
        twin.deviceEnds = played.map { c -> Int64? in
            guard let reason = c.lifecycle.disconnectReason, reason != .localHostTerminated, let end = c.lifecycle.disconnectTime else { return nil }
            let last = script.units.last { u in
                guard u.fromHost, case let .l2cap(h, _) = u.content else { return false }
                return h == c.handle && u.frame >= (c.lifecycle.completeFrame ?? 0) && u.frame <= (c.lifecycle.disconnectFrame ?? Int.max)
            }
            return max(0, end - (last?.timestamp ?? c.lifecycle.completeTime ?? end))
        }
        return twin
    }

    /// The last advertising and scan response data `address` sent before `frame` (any, if none before).
    static func advertising(of address: BDAddr, in script: Script, before frame: Int) -> Advertising? {
        var before: Advertising?, after: Advertising?
        for u in script.units where !u.fromHost {
            for s in Sighting.reports(in: u) where s.address == address {
                if u.frame < frame { update(&before, s) } else { update(&after, s) }
            }
        }
        return before ?? after
    }

    /// Legacy event types (Core v5.4 Vol 4 Part E 7.7.65.2): 0 ADV_IND, 1 ADV_DIRECT_IND, 4
    /// SCAN_RSP; extended (7.7.65.13): bit 0 connectable, bit 3 scan response, bit 4 legacy PDU.
    private static func update(_ a: inout Advertising?, _ s: Sighting) {
        var new = a ?? Advertising()
        let scanResponse = s.extended ? s.eventType & 0x08 != 0 : s.eventType == 4
        if scanResponse { new.scanResponse = s.data } else {
            new.data = s.data
            new.extended = s.extended && s.eventType & 0x10 == 0
            new.connectable = s.extended ? s.eventType & 0x01 != 0 : s.eventType == 0 || s.eventType == 1
        }
        a = new
    }
}
