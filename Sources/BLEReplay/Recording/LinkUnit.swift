import BLEBytes
import BLEProtocol

/// One thing that happens on the link, as replay compares it: an HCI command, an HCI event, a
/// whole L2CAP PDU (however many ACL packets carried it), or a packet compared as raw bytes (SCO,
/// ISO, ACL fragments that make no PDU).
public struct LinkUnit: Sendable {
    public enum Content: Sendable {
        /// The command packet: opcode, length, parameters.
        case command([UInt8])
        /// The event packet: code, length, parameters.
        case event([UInt8])
        /// An L2CAP PDU from its basic header, on connection `handle`.
        case l2cap(handle: UInt16, pdu: [UInt8])
        case raw(H4Packet)
    }

    public var content: Content
    /// The packets on the wire, in order (one, or the ACL fragments of a PDU).
    public var packets: [H4Packet]
    /// Frame numbers of those packets (recording) or live packet numbers.
    public var frames: [Int]
    /// Microseconds since the Unix epoch of the last packet.
    public var timestamp: Int64
    /// True for host → controller.
    public var fromHost: Bool

    /// The frame a report cites: the first packet's.
    public var frame: Int { frames.first ?? 0 }

    public init(content: Content, packets: [H4Packet], frames: [Int], timestamp: Int64, fromHost: Bool) {
        (self.content, self.packets, self.frames, self.timestamp, self.fromHost) = (content, packets, frames, timestamp, fromHost)
    }
}

/// Turns packets into units, one direction's ACL reassembled per connection handle. Used for the
/// recording (`Script`) and for what arrives live.
struct UnitBuilder {
    private var hostACL = ACLAssembler()
    private var controllerACL = ACLAssembler()

    mutating func push(_ packet: H4Packet, fromHost: Bool, frame: Int, timestamp: Int64) -> [LinkUnit] {
        switch packet.type {
        case .command:
            return [LinkUnit(content: .command(packet.bytes), packets: [packet], frames: [frame], timestamp: timestamp, fromHost: fromHost)]
        case .event:
            return [LinkUnit(content: .event(packet.bytes), packets: [packet], frames: [frame], timestamp: timestamp, fromHost: fromHost)]
        case .acl:
            let outputs = fromHost ? hostACL.push(packet, frame: frame) : controllerACL.push(packet, frame: frame)
            return outputs.map { Self.unit($0, fromHost: fromHost, timestamp: timestamp) }
        case .sco, .iso:
            return [LinkUnit(content: .raw(packet), packets: [packet], frames: [frame], timestamp: timestamp, fromHost: fromHost)]
        }
    }

    /// Incomplete PDUs at the end, as raw units.
    mutating func flush(timestamp: Int64) -> [LinkUnit] {
        hostACL.flush().map { Self.unit($0, fromHost: true, timestamp: timestamp) }
            + controllerACL.flush().map { Self.unit($0, fromHost: false, timestamp: timestamp) }
    }

    /// A link is gone: the partial PDUs of its handle, as raw units.
    mutating func flush(handle: UInt16, timestamp: Int64) -> [LinkUnit] {
        [hostACL.flush(handle: handle).map { Self.unit($0, fromHost: true, timestamp: timestamp) },
         controllerACL.flush(handle: handle).map { Self.unit($0, fromHost: false, timestamp: timestamp) }].compactMap { $0 }
    }

    /// A link is gone: its partial PDUs are dropped.
    mutating func disconnected(handle: UInt16) {
        hostACL.reset(handle: handle)
        controllerACL.reset(handle: handle)
    }

    private static func unit(_ o: ACLAssembler.Output, fromHost: Bool, timestamp: Int64) -> LinkUnit {
        let content: LinkUnit.Content
        if let pdu = o.pdu { content = .l2cap(handle: o.handle, pdu: pdu) } else { content = .raw(o.fragments.first ?? H4Packet(.acl, [])) }
        return LinkUnit(content: content, packets: o.fragments, frames: o.frames, timestamp: timestamp, fromHost: fromHost)
    }
}

/// A recording as units, in the order they completed.
public struct Script: Sendable {
    public var units: [LinkUnit]
    /// The recording's own notes (skipped frames).
    public var notes: [String]
    /// The recording's path.
    public var path: String

    public init(_ recording: Recording) {
        var builder = UnitBuilder()
        var units: [LinkUnit] = []
        units.reserveCapacity(recording.packets.count)
        for p in recording.packets {
            // A PDU the disconnection cut stays where the link ended, not where its handle is
            // next used (a later connection's).
            if !p.fromHost, p.packet.type == .event, let handle = Self.disconnected(p.packet) {
                units += builder.flush(handle: handle, timestamp: p.timestamp)
            }
            units += builder.push(p.packet, fromHost: p.fromHost, frame: p.frame, timestamp: p.timestamp)
        }
        units += builder.flush(timestamp: recording.packets.last?.timestamp ?? 0)
        self.units = units
        self.notes = recording.notes
        self.path = recording.path
    }

    /// The handle of a Disconnection Complete (decoded by BLEProtocol's `HCIEvent`), else nil.
    static func disconnected(_ packet: H4Packet) -> UInt16? {
        packet.bytes.withUnsafeBytes { raw -> UInt16? in
            var r = ByteReader(raw)
            guard case let .disconnectionComplete(_, handle, _)? = try? HCIEvent.decode(&r) else { return nil }
            return handle
        }
    }

    /// The step of each unit, as divergences report it: the number of host units before it.
    public var steps: [Int] {
        var steps: [Int] = [], n = 0
        steps.reserveCapacity(units.count)
        for u in units { steps.append(n); if u.fromHost { n += 1 } }
        return steps
    }
}
