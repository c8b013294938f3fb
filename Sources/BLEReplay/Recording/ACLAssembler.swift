import BLEBytes
import BLEProtocol

/// L2CAP PDUs of one direction's ACL packets, with the packets that carried each: BLEProtocol's
/// `L2CAPReassembler` joins the bytes (Core v5.4 Vol 4 Part E 5.4.2, Vol 3 Part A 3.1); this keeps
/// the packets and frame numbers replay compares and cites.
///
/// Works on owned bytes (live packets, copied recordings). Fragments that make no PDU — a start
/// arriving while a PDU is incomplete (the old fragments), a continuation without a start, a start
/// too short for the L2CAP header, fragments carrying more than the PDU — come out as an `Output`
/// without `pdu`, so nothing is lost. Pending packets are bounded like the reassembler's bytes.
struct ACLAssembler {
    struct Output {
        var handle: UInt16
        /// The L2CAP PDU (basic header included); nil when the fragments do not make one.
        var pdu: [UInt8]?
        var fragments: [H4Packet]
        var frames: [Int]
    }

    private var reassembler = L2CAPReassembler()
    /// The packets of the PDU in progress per handle (those the reassembler holds bytes of).
    private var pending: [UInt16: (fragments: [H4Packet], frames: [Int])] = [:]

    /// Feeds one ACL packet (header included); returns what it completed.
    mutating func push(_ packet: H4Packet, frame: Int) -> [Output] {
        let b = packet.bytes
        guard let header = b.withReader({ HCIPacketHeader.acl($0) }) else { return [Output(handle: 0, pdu: nil, fragments: [packet], frames: [frame])] }
        var out: [Output] = []
        if header.isStart, let old = pending.removeValue(forKey: header.handle) {
            out.append(Output(handle: header.handle, pdu: nil, fragments: old.fragments, frames: old.frames))
        }
        var delivered: [UInt8]? = nil
        let key = Self.key(header.handle)
        b.withUnsafeBytes { raw in
            _ = reassembler.push(key, isStart: header.isStart, data: ByteReader(UnsafeRawBufferPointer(rebasing: raw[ACLHeader.size...]), base: ACLHeader.size),
                                 frame: frame) { pdu, _ in delivered = Array(pdu.remainingBytes) }
        }
        var carried = pending.removeValue(forKey: header.handle) ?? ([], [])
        guard delivered != nil || reassembler.inProgress(key) != nil else {
            // Not used: a continuation without a start, a start too short for the L2CAP header.
            out.append(Output(handle: header.handle, pdu: nil, fragments: [packet], frames: [frame]))
            return out
        }
        carried.fragments.append(packet)
        carried.frames.append(frame)
        if let delivered {
            // Fragments carrying more than the L2CAP length make no PDU.
            let bytes = carried.fragments.reduce(0) { $0 + $1.bytes.count - 4 }
            out.append(Output(handle: header.handle, pdu: bytes == delivered.count ? delivered : nil, fragments: carried.fragments, frames: carried.frames))
        } else {
            pending[header.handle] = carried
        }
        return out
    }

    /// Incomplete PDUs left at the end.
    mutating func flush() -> [Output] {
        defer {
            pending.removeAll()
            reassembler = L2CAPReassembler()
        }
        return pending.sorted { $0.key < $1.key }.map { Output(handle: $0.key, pdu: nil, fragments: $0.value.fragments, frames: $0.value.frames) }
    }

    /// A link is gone: its partial PDU, if any, as an incomplete output (then forgotten).
    mutating func flush(handle: UInt16) -> Output? {
        defer { reset(handle: handle) }
        return pending[handle].map { Output(handle: handle, pdu: nil, fragments: $0.fragments, frames: $0.frames) }
    }

    /// Forgets a link's partial PDU (disconnection).
    mutating func reset(handle: UInt16) {
        pending[handle] = nil
        reassembler.reset(adapter: 0, handle: handle)
    }

    /// One direction, one controller: the handle is the link.
    private static func key(_ handle: UInt16) -> L2CAPReassembler.Key { .init(adapter: 0, handle: handle, received: false) }
}
