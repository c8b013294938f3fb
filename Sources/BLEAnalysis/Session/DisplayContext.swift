import BLEProtocol

/// The session context for displaying ATT PDUs (`packets`): names of handles from the rebuilt
/// GATT database, value types for decoding, and the request a response answers.
extension Connection {
    /// - Parameter received: the PDU goes controller → host (so a response answers the host's request).
    public func attDisplayContext(received: Bool) -> ATTDisplayContext {
        let db = gatt
        let request = att.outstanding[received ? 0 : 1]
        return ATTDisplayContext(describeHandle: { db?.name(of: $0) },
                                 valueUUID: { db?.uuid(of: $0) },
                                 requestHandle: request?.handle,
                                 requestedType: request?.type)
    }
}
