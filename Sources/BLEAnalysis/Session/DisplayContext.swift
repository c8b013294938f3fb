import BLEProtocol

/// The session context for displaying ATT PDUs (`packets`): names of handles from the rebuilt
/// GATT database, value types for decoding, and the request a response answers.
extension Connection {
    /// - Parameters:
    ///   - received: the PDU goes controller → host (so a response answers the host's request).
    ///   - opcode: the ATT opcode, which tells which side is the server.
    public func attDisplayContext(received: Bool, opcode: UInt8?) -> ATTDisplayContext {
        let serverIsHost = opcode.map { ATTRoles.serverIsHost(ATTOpcode($0), sent: !received) } ?? false
        let db = gatt(serverIsHost: serverIsHost)
        let request = att.outstanding[received ? 0 : 1]
        return ATTDisplayContext(describeHandle: { db?.name(of: $0) },
                                 valueUUID: { db?.uuid(of: $0) },
                                 requestHandle: request?.handle,
                                 requestedType: request?.type)
    }
}

extension Connection {
    /// For `packets`: whether a K-frame on `cid` starts an SDU (nil when the channel is unknown).
    public func startsSDU(cid: UInt16, received: Bool) -> Bool? { creditChannels.startsSDU(cid: cid, sent: !received) }
}
