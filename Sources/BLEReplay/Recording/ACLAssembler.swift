import BLEProtocol

/// Reassembles L2CAP PDUs from ACL packets of one direction, keeping the packets that carried
/// each PDU (Core v5.4 Vol 4 Part E 5.4.2 Packet_Boundary_Flag, Vol 3 Part A 3.1 basic header).
///
/// Works on owned bytes (live packets, copied recordings). A start fragment that arrives while a
/// PDU is incomplete, or a continuation without a start, is delivered as an `incomplete` unit so
/// nothing is lost; pending bytes are bounded by the largest L2CAP PDU.
struct ACLAssembler {
    struct Output {
        var handle: UInt16
        /// The L2CAP PDU (basic header included); nil when the fragments do not make one.
        var pdu: [UInt8]?
        var fragments: [H4Packet]
        var frames: [Int]
    }

    private struct Pending {
        var expected: Int
        var data: [UInt8]
        var fragments: [H4Packet]
        var frames: [Int]
    }

    private var pending: [UInt16: Pending] = [:]

    /// Feeds one ACL packet (header included); returns what it completed.
    mutating func push(_ packet: H4Packet, frame: Int) -> [Output] {
        let b = packet.bytes
        guard b.count >= 4 else { return [Output(handle: 0, pdu: nil, fragments: [packet], frames: [frame])] }
        let word = UInt16(b[0]) | UInt16(b[1]) << 8
        let header = ACLHeader(word: word, length: UInt16(b[2]) | UInt16(b[3]) << 8)
        let data = b[4...]
        var out: [Output] = []
        if header.isStart {
            if let old = pending.removeValue(forKey: header.handle) {
                out.append(Output(handle: header.handle, pdu: nil, fragments: old.fragments, frames: old.frames))
            }
            guard data.count >= 2 else {
                out.append(Output(handle: header.handle, pdu: nil, fragments: [packet], frames: [frame]))
                return out
            }
            let expected = L2CAP.basicHeaderLength + (Int(data[data.startIndex]) | Int(data[data.startIndex + 1]) << 8)
            pending[header.handle] = Pending(expected: expected, data: [], fragments: [], frames: [])
        }
        guard var p = pending[header.handle] else {
            out.append(Output(handle: header.handle, pdu: nil, fragments: [packet], frames: [frame]))
            return out
        }
        p.data.append(contentsOf: data)
        p.fragments.append(packet)
        p.frames.append(frame)
        if p.data.count >= p.expected {
            pending[header.handle] = nil
            let exact = p.data.count == p.expected
            out.append(Output(handle: header.handle, pdu: exact ? p.data : nil, fragments: p.fragments, frames: p.frames))
        } else {
            pending[header.handle] = p
        }
        return out
    }

    /// Incomplete PDUs left at the end.
    mutating func flush() -> [Output] {
        defer { pending.removeAll() }
        return pending.sorted { $0.key < $1.key }.map { Output(handle: $0.key, pdu: nil, fragments: $0.value.fragments, frames: $0.value.frames) }
    }

    /// Forgets a link's partial PDU (disconnection).
    mutating func reset(handle: UInt16) { pending[handle] = nil }
}
