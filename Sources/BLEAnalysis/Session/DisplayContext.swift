import BLEBytes
import BLEProtocol

/// The session context for displaying ATT PDUs (`packets`): names of handles from the rebuilt
/// GATT database, value types for decoding, and the request a response answers.
extension Connection {
    /// - Parameters:
    ///   - received: the PDU goes controller → host (so a response answers the host's request).
    ///   - opcode: the ATT opcode, which tells which side is the server.
    public func attDisplayContext(received: Bool, opcode: UInt8?) -> ATTDisplayContext {
        let serverIsHost = opcode.map { ATTRoles.serverIsHost(ATTOpcode($0), sent: !received) } ?? false
        let request = att.outstanding(from: received ? .host : .peer)
        return ATTDisplayContext(attributes: gatt(serverIsHost: serverIsHost),
                                 requestHandle: request?.handle, requestedType: request?.type)
    }
}

extension GATTDatabase: ATTAttributeSource {
    public func attributeText(_ handle: UInt16) -> String? { attribute(of: handle) }
    public func valueUUID(_ handle: UInt16) -> BluetoothUUID? { uuid(of: handle) }
}

extension Connection {
    /// For `packets`: whether a K-frame on `cid` starts an SDU (nil when the channel is unknown).
    public func startsSDU(cid: UInt16, received: Bool) -> Bool? { creditChannels.startsSDU(cid: cid, sent: !received) }

    /// The upper layers of a complete L2CAP PDU (header included) on this link, decoded as
    /// `packets` shows them: handles named from the GATT database, K-frames placed in their SDU.
    /// For the bodies of `Analyzer.consume(_:pdu:)` (`CompletedPDU.displayLayers`).
    public func displayLayers(_ pdu: inout ByteReader, received: Bool) -> [Layer] {
        var layers: [Layer] = []
        displayLayers(&pdu, received: received, into: &layers)
        return layers
    }

    /// `displayLayers(_:received:)` appending to `layers`.
    public func displayLayers(_ pdu: inout ByteReader, received: Bool, into layers: inout [Layer]) {
        let state = displayState(pdu, received: received)
        L2CAPDisplay.decode(pdu: &pdu, context: state.context, isFirstKFrame: state.firstKFrame, into: &layers)
    }

    /// What `displayLayers` decodes `pdu` (basic L2CAP header first) with at this moment: the ATT
    /// context (the ATT opcode tells which side serves the database) and whether a K-frame starts
    /// an SDU. The HTML report keeps it beside a copy of the PDU to decode it later.
    public func displayState(_ pdu: ByteReader, received: Bool) -> (context: ATTDisplayContext, firstKFrame: Bool?) {
        // Basic L2CAP header (Core v5.4 Vol 3 Part A 3.1): Length, Channel ID; then the ATT opcode.
        let cid = L2CAP.BasicHeader.channel(of: pdu)
        let opcode = cid == L2CAP.ChannelID.att.rawValue ? pdu.peekU8(at: 4) : nil
        return (attDisplayContext(received: received, opcode: opcode), startsSDU(cid: cid, received: received))
    }
}
