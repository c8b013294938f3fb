import BLEBytes

extension L2CAP {
    /// A signalling command code, Core v5.4 Vol 3 Part A 4 (Table 4.2). Open.
    public struct SignalingCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: UInt8
        @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }
        @inlinable public init(_ rawValue: UInt8) { self.rawValue = rawValue }

        public static let commandReject = SignalingCode(0x01)
        public static let connectionRequest = SignalingCode(0x02)
        public static let connectionResponse = SignalingCode(0x03)
        public static let configurationRequest = SignalingCode(0x04)
        public static let configurationResponse = SignalingCode(0x05)
        public static let disconnectionRequest = SignalingCode(0x06)
        public static let disconnectionResponse = SignalingCode(0x07)
        public static let echoRequest = SignalingCode(0x08)
        public static let echoResponse = SignalingCode(0x09)
        public static let informationRequest = SignalingCode(0x0A)
        public static let informationResponse = SignalingCode(0x0B)
        public static let createChannelRequest = SignalingCode(0x0C)
        public static let createChannelResponse = SignalingCode(0x0D)
        public static let moveChannelRequest = SignalingCode(0x0E)
        public static let moveChannelResponse = SignalingCode(0x0F)
        public static let moveChannelConfirmationRequest = SignalingCode(0x10)
        public static let moveChannelConfirmationResponse = SignalingCode(0x11)
        public static let connectionParameterUpdateRequest = SignalingCode(0x12)
        public static let connectionParameterUpdateResponse = SignalingCode(0x13)
        public static let leCreditBasedConnectionRequest = SignalingCode(0x14)
        public static let leCreditBasedConnectionResponse = SignalingCode(0x15)
        public static let flowControlCreditIndication = SignalingCode(0x16)
        public static let creditBasedConnectionRequest = SignalingCode(0x17)
        public static let creditBasedConnectionResponse = SignalingCode(0x18)
        public static let creditBasedReconfigureRequest = SignalingCode(0x19)
        public static let creditBasedReconfigureResponse = SignalingCode(0x1A)

        /// `Connection Parameter Update Request`, or `Unknown`.
        public var name: String { L2CAPSignalingTable.index[rawValue]?.name.description ?? "Unknown" }
        /// The response code of a request, as the table pairs them (Connection Parameter Update
        /// Request → Response); nil for responses, indications and unknown codes.
        public var responseCode: SignalingCode? { L2CAPSignalingTable.index[rawValue]?.response }
        /// `Connection Parameter Update Request (0x12)`.
        public var description: String { "\(name) (0x\(Hex.pad(rawValue, 2)))" }
    }

    /// A signalling command with its header (Code, Identifier, Length), Core v5.4 Vol 3 Part A 4.
    public struct SignalingPacket: Hashable, Sendable {
        public var code: SignalingCode
        /// Matches a response to its request; 0x00 is illegal (Vol 3 Part A 4).
        public var identifier: UInt8
        public var command: SignalingCommand
        @inlinable public init(code: SignalingCode, identifier: UInt8, command: SignalingCommand) {
            (self.code, self.identifier, self.command) = (code, identifier, command)
        }
    }

    /// A decoded signalling command, Core v5.4 Vol 3 Part A 4.1–4.26.
    public enum SignalingCommand: Sendable, Hashable {
        /// 4.1. `data` is the Reason Data (Actual MTU, or the Local and Remote CIDs).
        case commandReject(reason: UInt16, data: ByteRange)
        /// 4.2 (BR/EDR).
        case connectionRequest(psm: UInt16, sourceCID: UInt16)
        /// 4.3 (BR/EDR).
        case connectionResponse(destinationCID: UInt16, sourceCID: UInt16, result: UInt16, status: UInt16)
        /// 4.4 (BR/EDR): `options` are the configuration options, raw.
        case configurationRequest(destinationCID: UInt16, flags: UInt16, options: ByteRange)
        /// 4.5 (BR/EDR).
        case configurationResponse(sourceCID: UInt16, flags: UInt16, result: UInt16, options: ByteRange)
        /// 4.6.
        case disconnectionRequest(destinationCID: UInt16, sourceCID: UInt16)
        /// 4.7.
        case disconnectionResponse(destinationCID: UInt16, sourceCID: UInt16)
        /// 4.8 (BR/EDR).
        case echoRequest(data: ByteRange)
        /// 4.9 (BR/EDR).
        case echoResponse(data: ByteRange)
        /// 4.10 (BR/EDR).
        case informationRequest(infoType: UInt16)
        /// 4.11 (BR/EDR).
        case informationResponse(infoType: UInt16, result: UInt16, data: ByteRange)
        /// 4.12–4.19: AMP Create/Move Channel commands (AMP was removed in Core v5.3), kept raw.
        case amp(SignalingCode, payload: ByteRange)
        /// 4.20.
        case connectionParameterUpdateRequest(ConnectionParameterUpdateRequest)
        /// 4.21: 0x0000 accepted, 0x0001 rejected.
        case connectionParameterUpdateResponse(result: UInt16)
        /// 4.22.
        case leCreditBasedConnectionRequest(LECreditBasedConnectionRequest)
        /// 4.23.
        case leCreditBasedConnectionResponse(LECreditBasedConnectionResponse)
        /// 4.24: Flow Control Credit Indication.
        case flowControlCreditIndication(cid: UInt16, credits: UInt16)
        /// 4.25: enhanced credit-based connection for up to 5 channels.
        case creditBasedConnectionRequest(CreditBasedConnectionRequest)
        /// 4.26.
        case creditBasedConnectionResponse(CreditBasedConnectionResponse)
        /// 4.27.
        case creditBasedReconfigureRequest(mtu: UInt16, mps: UInt16, destinationCIDs: [UInt16])
        /// 4.28.
        case creditBasedReconfigureResponse(result: UInt16)
        /// A code the table does not know.
        case unknown(SignalingCode, payload: ByteRange)
    }

    /// Connection Parameter Update Request, 4.20. Raw units beside computed durations.
    public struct ConnectionParameterUpdateRequest: Hashable, Sendable {
        /// Interval Min, ×1.25 ms (6…3200).
        public var intervalMinUnits: UInt16
        /// Interval Max, ×1.25 ms.
        public var intervalMaxUnits: UInt16
        /// Peripheral Latency, in connection events.
        public var latency: UInt16
        /// Timeout Multiplier, ×10 ms.
        public var timeoutUnits: UInt16

        public init(intervalMinUnits: UInt16, intervalMaxUnits: UInt16, latency: UInt16, timeoutUnits: UInt16) {
            (self.intervalMinUnits, self.intervalMaxUnits, self.latency, self.timeoutUnits) = (intervalMinUnits, intervalMaxUnits, latency, timeoutUnits)
        }

        public var intervalMin: Duration { .microseconds(Int64(intervalMinUnits) * 1250) }
        public var intervalMax: Duration { .microseconds(Int64(intervalMaxUnits) * 1250) }
        public var timeout: Duration { .milliseconds(Int64(timeoutUnits) * 10) }
    }

    /// LE Credit Based Connection Request, 4.22.
    public struct LECreditBasedConnectionRequest: Hashable, Sendable {
        public var spsm: UInt16
        public var sourceCID: UInt16
        public var mtu: UInt16
        public var mps: UInt16
        public var initialCredits: UInt16
        public init(spsm: UInt16, sourceCID: UInt16, mtu: UInt16, mps: UInt16, initialCredits: UInt16) {
            (self.spsm, self.sourceCID, self.mtu, self.mps, self.initialCredits) = (spsm, sourceCID, mtu, mps, initialCredits)
        }
    }

    /// LE Credit Based Connection Response, 4.23.
    public struct LECreditBasedConnectionResponse: Hashable, Sendable {
        public var destinationCID: UInt16
        public var mtu: UInt16
        public var mps: UInt16
        public var initialCredits: UInt16
        /// 0x0000 successful; see `L2CAPSignalingTable.leCreditResults`.
        public var result: UInt16
        public init(destinationCID: UInt16, mtu: UInt16, mps: UInt16, initialCredits: UInt16, result: UInt16) {
            (self.destinationCID, self.mtu, self.mps, self.initialCredits, self.result) = (destinationCID, mtu, mps, initialCredits, result)
        }
    }

    /// Credit Based Connection Request, 4.25.
    public struct CreditBasedConnectionRequest: Hashable, Sendable {
        public var spsm: UInt16
        public var mtu: UInt16
        public var mps: UInt16
        public var initialCredits: UInt16
        /// 1…5 Source CIDs.
        public var sourceCIDs: [UInt16]
        public init(spsm: UInt16, mtu: UInt16, mps: UInt16, initialCredits: UInt16, sourceCIDs: [UInt16]) {
            (self.spsm, self.mtu, self.mps, self.initialCredits, self.sourceCIDs) = (spsm, mtu, mps, initialCredits, sourceCIDs)
        }
    }

    /// Credit Based Connection Response, 4.26.
    public struct CreditBasedConnectionResponse: Hashable, Sendable {
        public var mtu: UInt16
        public var mps: UInt16
        public var initialCredits: UInt16
        public var result: UInt16
        /// One per requested channel; 0x0000 for a refused one.
        public var destinationCIDs: [UInt16]
        public init(mtu: UInt16, mps: UInt16, initialCredits: UInt16, result: UInt16, destinationCIDs: [UInt16]) {
            (self.mtu, self.mps, self.initialCredits, self.result, self.destinationCIDs) = (mtu, mps, initialCredits, result, destinationCIDs)
        }
    }

    /// Most channels one Credit Based Connection / Reconfigure Request may name, Vol 3 Part A 4.25.
    public static let maxCreditBasedChannels = 5

    /// Decodes one signalling command (Code, Identifier, Length, data) and advances past it; call it
    /// again while bytes remain on the BR/EDR signalling channel.
    ///
    /// Bytes inside the declared Length beyond what a fixed-size command defines are ignored here
    /// (the display notes them).
    /// - Throws: `.truncated` for a short header, `.lengthMismatch` when Length runs past the
    ///   bytes, or the command's own error.
    public static func decodeSignaling(_ r: inout ByteReader) throws(DecodeError) -> SignalingPacket {
        let code = SignalingCode(try r.u8("Code"))
        let identifier = try r.u8("Identifier")
        let length = Int(try r.u16le("Length"))
        guard length <= r.remaining else {
            throw DecodeError(kind: .lengthMismatch(declared: length, actual: r.remaining), offset: r.absoluteOffset &- 2, field: "Length")   // safe: Length just read
        }
        var data = try r.slice(length, "Data")
        guard let entry = L2CAPSignalingTable.index[code.rawValue] else {
            return SignalingPacket(code: code, identifier: identifier, command: .unknown(code, payload: data.takeRest()))
        }
        try entry.size.check(data, entry.name)
        return SignalingPacket(code: code, identifier: identifier, command: try entry.decode(&data))
    }
}
