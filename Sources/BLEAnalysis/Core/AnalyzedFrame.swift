import BLEBytes
import BLECapture
import BLEProtocol

/// One frame as the pass saw it: what `Analyzer.consume(_:pdu:)` returns. The frame says what it is
/// (`frame.kind`: HCI command, event, ACL fragment, air packet, log record); this says what the
/// pass made of it — its verdict (malformed, with reason and file offset), an air packet's LL
/// parse and link context. The L2CAP PDU it completed, if any, is handed typed to the body of
/// `consume(_:pdu:)` as a `CompletedPDU` while the frame is taken.
///
/// A view like `Frame`: it points into the capture's bytes and is valid while the frame is.
public struct AnalyzedFrame {
    public let frame: Frame
    /// `.ok`, or `.malformed(reason, offset)` with a file offset (also inside a PDU reassembled
    /// from several fragments).
    public let status: FrameStatus
    /// An air frame's LL packet, parsed once by the pass (nil for every other kind of frame).
    public let air: Result<LLAirPacket, DecodeError>?
    /// What the pass knew of an air frame's link when it took it: CRC check, direction,
    /// retransmission, encryption (empty for other frames).
    public let airContext: LinkLayerDisplay.Context

    /// The LL packet when it parsed.
    public var airPacket: LLAirPacket? { try? air?.get() }

    /// An air frame's LL layers as `packets` shows them, with what the pass learnt of its link
    /// (empty for other frames). A record the reader flagged (cut, lying length) was not given to
    /// the link layer: its bytes are parsed here, without context.
    public func airLayers() -> [Layer] {
        guard frame.kind == .airLE else { return [] }
        let linkType = UInt32(frame.rawType)
        let parse = air ?? Result { () throws(DecodeError) in try LLAirPacket.parse(linkType: linkType, frame.payload, base: frame.payloadOffset) }
        return LinkLayerDisplay.layers(parse, linkType: linkType, frame.payload, base: frame.payloadOffset, context: airContext)
    }
}

/// An L2CAP PDU that a frame completed, handed to the body of `Analyzer.consume(_:pdu:)` *before
/// the session acts on it*: the request a response answers is still outstanding and a discovery
/// response has not yet added its names, so it decodes as it read when it went by.
///
/// A view, valid inside the body only: `bytes` and `map` point into the frame (a PDU in one
/// fragment) or into the reassembler's buffer (a PDU in several), which the next fragment reuses.
/// Copy out (`Array(bytes.remainingBytes)`, `Array(map)`) what must outlive the body.
public struct CompletedPDU {
    /// The link it travelled on.
    public let connection: Connection
    /// Controller → host (the ACL packet that completed it; for air captures, the packet the LL
    /// adapter made of the data PDU as the central's host would have seen it).
    public let received: Bool
    /// The PDU from its basic L2CAP header (Length, Channel ID; Core v5.4 Vol 3 Part A 3.1) on.
    /// Reader offsets are file offsets when the PDU came in one fragment; `map` turns them into
    /// file offsets otherwise.
    public let bytes: ByteReader
    /// Where each byte of the PDU lies in the file, fragment by fragment.
    public let map: FragmentMap
    /// The frame that carried its start fragment.
    public let firstFrame: Int

    /// Channel ID of the basic header (0 when the PDU is too short to hold one).
    public var channel: UInt16 { L2CAP.BasicHeader.channel(of: bytes) }
    /// The ATT opcode of a PDU on the LE ATT channel (0x0004).
    public var attOpcode: ATTOpcode? {
        channel == L2CAP.ChannelID.att.rawValue ? bytes.peekU8(at: 4).map { ATTOpcode($0) } : nil
    }
    /// The ATT PDU, typed, of a PDU on the ATT channel (nil: another channel, or malformed).
    public var att: ATT.PDU? {
        guard channel == L2CAP.ChannelID.att.rawValue, var r = try? payload() else { return nil }
        return try? ATT.decode(&r)
    }
    /// The SMP command, typed, of a PDU on an SMP channel (LE 0x0006, BR/EDR 0x0007).
    public var smp: SMP.Command? {
        guard channel == L2CAP.ChannelID.smp.rawValue || channel == L2CAP.ChannelID.brEdrSMP.rawValue, var r = try? payload() else { return nil }
        return try? SMP.decode(&r)
    }
    /// The information payload after the 4-byte basic header.
    private func payload() throws(DecodeError) -> ByteReader {
        var r = bytes
        try r.skip(4, "L2CAP header")
        return r.rest()
    }

    /// The upper layers (L2CAP and what it carries) as `packets` shows them: handles named from
    /// the GATT database as known so far, K-frames placed in their SDU, and errors at file offsets.
    public func displayLayers(into layers: inout [Layer]) {
        let first = layers.count
        var r = bytes
        connection.displayLayers(&r, received: received, into: &layers)
        map.fileErrors(&layers, from: first)
    }
}
