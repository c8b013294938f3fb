import BLEBytes
import BLEProtocol

/// What the twin reads of an L2CAP PDU (basic header included) or of its ATT / SMP payload, read
/// by BLEProtocol's decoders (`L2CAP.BasicHeader`, `ATT.decode`, `SMP.decode`), never by byte index.
enum TwinPDU {
    /// The channel of a PDU with its basic header (Core v5.4 Vol 3 Part A 3.1); nil when too short.
    static func channel(_ pdu: [UInt8]) -> L2CAP.ChannelID? {
        pdu.withUnsafeBytes { raw in
            var r = ByteReader(raw)
            return try? L2CAP.BasicHeader.read(&r).channel
        }
    }

    /// The payload's first byte (the ATT opcode, the SMP code) when the PDU is on `channel`.
    static func code(_ pdu: [UInt8], on channel: L2CAP.ChannelID) -> UInt8? {
        pdu.withUnsafeBytes { raw in
            var r = ByteReader(raw)
            guard (try? L2CAP.BasicHeader.read(&r).channel) == channel else { return nil }
            return try? r.u8("Code")
        }
    }

    /// The ATT opcode of a PDU (basic header included) on the ATT channel.
    static func attOpcode(_ pdu: [UInt8]) -> ATTOpcode? {
        code(pdu, on: .att).map(ATTOpcode.init(rawValue:))
    }

    /// The payload after the basic header when the PDU is on `channel`.
    static func payload(_ pdu: [UInt8], on channel: L2CAP.ChannelID) -> [UInt8]? {
        self.channel(pdu) == channel ? Array(pdu.dropFirst(L2CAP.basicHeaderLength)) : nil
    }

    /// An ATT payload, decoded; its values are ranges of `payload` (`bytes(_:of:)`).
    static func att(_ payload: [UInt8]) -> ATT.PDU? {
        payload.withUnsafeBytes { raw in
            var r = ByteReader(raw)
            return try? ATT.decode(&r)
        }
    }

    /// An SMP payload, decoded; with `exact`, nil when bytes trail the command's fixed size.
    static func smp(_ payload: [UInt8], exact: Bool = false) -> SMP.Command? {
        payload.withUnsafeBytes { raw in
            var r = ByteReader(raw)
            guard let command = try? SMP.decode(&r), !exact || r.isAtEnd else { return nil }
            return command
        }
    }

    /// The association model of a Pairing Request and a Pairing Response (SMP payloads, code first):
    /// BLEProtocol's `SMP.PairingMethod.select` (Core v5.4 Vol 3 Part H 2.3.5.1, Tables 2.6–2.8), the
    /// same the analysis tells; nil when either is not a pairing request/response.
    static func pairingMethod(request: [UInt8], response: [UInt8]) -> SMP.PairingMethod? {
        guard case let .pairingRequest(i)? = smp(request), case let .pairingResponse(r)? = smp(response) else { return nil }
        return SMP.PairingMethod.select(initiator: i, responder: r)
    }

    /// The device's recorded Pairing Response with its Initiator and Responder Key Distribution cut to
    /// what the central's Pairing Request asked (Part H 3.5.2: at most what was asked), and whether
    /// both ask for LE Secure Connections (AuthReq SC, 2.3.5.6), with both sides' parameters; nil
    /// unless both decode.
    static func pairingResponse(_ recorded: [UInt8], answering request: [UInt8])
        -> (pdu: [UInt8], secureConnections: Bool, request: SMP.PairingParameters, response: SMP.PairingParameters)? {
        guard case let .pairingRequest(q)? = smp(request), case var .pairingResponse(r)? = smp(recorded) else { return nil }
        let sc = q.authReq.contains(.secureConnections) && r.authReq.contains(.secureConnections)
        r.initiatorKeyDistribution = r.initiatorKeyDistribution.intersection(q.initiatorKeyDistribution)
        r.responderKeyDistribution = r.responderKeyDistribution.intersection(q.responderKeyDistribution)
        return (r.bytes(.pairingResponse), sc, q, r)
    }

    /// The reason of a Pairing Failed payload (3.5.5); nil for any other payload.
    static func failureReason(_ payload: [UInt8]) -> SMPFailureReason? {
        if case let .pairingFailed(reason)? = smp(payload) { reason } else { nil }
    }

    /// The SMP code of a payload (its first field), read by the SMP decoder's own table of codes.
    static func smpCode(_ payload: [UInt8]) -> SMPCode? {
        payload.withUnsafeBytes { raw in
            var r = ByteReader(raw)
            return (try? r.u8("Code")).map(SMPCode.init(rawValue:))
        }
    }

    /// The 16-byte value after the code of a Pairing Confirm, Random or DHKey Check (3.5.3, 3.5.4, 3.5.7).
    static func smpValue(_ payload: [UInt8]) -> [UInt8]? {
        switch smp(payload) {
        case let .pairingConfirm(v)?, let .pairingRandom(v)?, let .pairingDHKeyCheck(v)?: return bytes(v, of: payload)
        default: return nil
        }
    }

    /// The bytes of a range a decoder gave for `payload` (decoded from offset 0).
    static func bytes(_ range: ByteRange, of payload: [UInt8]) -> [UInt8] {
        guard range.offset >= 0, range.count >= 0, range.offset <= payload.count, range.count <= payload.count - range.offset else { return [] }
        return Array(payload[range.offset ..< range.offset + range.count])
    }
}
