import BLEBytes

/// An ATT opcode, Core v5.4 Vol 3 Part F 3.3.1: bit 7 Authentication Signature Flag, bit 6 Command
/// Flag, bits 5…0 Method. An open struct: an unknown opcode is a value too ("Unknown (0x99)").
/// Names, method kinds and request/response pairs come from the decoding table (`ATTDecoding`).
public struct ATTOpcode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }
    @inlinable public init(_ rawValue: UInt8) { self.rawValue = rawValue }

    public static let errorResponse = ATTOpcode(0x01)
    public static let exchangeMTURequest = ATTOpcode(0x02)
    public static let exchangeMTUResponse = ATTOpcode(0x03)
    public static let findInformationRequest = ATTOpcode(0x04)
    public static let findInformationResponse = ATTOpcode(0x05)
    public static let findByTypeValueRequest = ATTOpcode(0x06)
    public static let findByTypeValueResponse = ATTOpcode(0x07)
    public static let readByTypeRequest = ATTOpcode(0x08)
    public static let readByTypeResponse = ATTOpcode(0x09)
    public static let readRequest = ATTOpcode(0x0A)
    public static let readResponse = ATTOpcode(0x0B)
    public static let readBlobRequest = ATTOpcode(0x0C)
    public static let readBlobResponse = ATTOpcode(0x0D)
    public static let readMultipleRequest = ATTOpcode(0x0E)
    public static let readMultipleResponse = ATTOpcode(0x0F)
    public static let readByGroupTypeRequest = ATTOpcode(0x10)
    public static let readByGroupTypeResponse = ATTOpcode(0x11)
    public static let writeRequest = ATTOpcode(0x12)
    public static let writeResponse = ATTOpcode(0x13)
    public static let prepareWriteRequest = ATTOpcode(0x16)
    public static let prepareWriteResponse = ATTOpcode(0x17)
    public static let executeWriteRequest = ATTOpcode(0x18)
    public static let executeWriteResponse = ATTOpcode(0x19)
    public static let handleValueNotification = ATTOpcode(0x1B)
    public static let handleValueIndication = ATTOpcode(0x1D)
    public static let handleValueConfirmation = ATTOpcode(0x1E)
    public static let readMultipleVariableRequest = ATTOpcode(0x20)
    public static let readMultipleVariableResponse = ATTOpcode(0x21)
    public static let multipleHandleValueNotification = ATTOpcode(0x23)
    public static let writeCommand = ATTOpcode(0x52)
    public static let signedWriteCommand = ATTOpcode(0xD2)

    /// Bits 5…0.
    @inlinable public var method: UInt8 { rawValue & 0x3F }
    /// Bit 6: a command gets no response, and a server ignores a command it does not support.
    @inlinable public var isCommand: Bool { rawValue & 0x40 != 0 }
    /// Bit 7: the PDU ends with a 12-byte Authentication Signature.
    @inlinable public var isSigned: Bool { rawValue & 0x80 != 0 }

    /// True when the decoding table has a row for this opcode.
    public var isKnown: Bool { ATTDecoding.index[rawValue] != nil }
    /// `Read By Type Request`, or `Unknown`.
    public var name: String { ATTDecoding.index[rawValue]?.name.description ?? "Unknown" }
    /// What kind of message this is (request, response, command…); nil when unknown.
    public var kind: ATTMethodKind? { ATTDecoding.index[rawValue]?.kind }

    /// The response a request expects (Read Request → Read Response); for a Handle Value
    /// Indication, the Handle Value Confirmation. nil for everything else. An Error Response can
    /// answer any request too (its Request Opcode In Error names the request).
    public var responseOpcode: ATTOpcode? { ATTDecoding.index[rawValue]?.response }

    /// The request a response answers (the inverse of `responseOpcode`); nil otherwise.
    public var requestOpcode: ATTOpcode? { ATTDecoding.requestForResponse[Int(rawValue)] }

    /// `Read Request (0x0a)`.
    public var description: String { "\(name) (0x\(Hex.pad(rawValue, 2)))" }
}

/// The kind of an ATT PDU, Core v5.4 Vol 3 Part F 3.3 / 3.4.9.
public enum ATTMethodKind: Sendable, Equatable {
    /// Client → server, expects a response (one outstanding per bearer).
    case request
    /// Server → client, answers a request.
    case response
    /// Client → server, no response.
    case command
    /// Server → client, no confirmation.
    case notification
    /// Server → client, expects a confirmation.
    case indication
    /// Client → server, answers an indication.
    case confirmation

    /// True for PDUs sent by the client (requests, commands, confirmations).
    public var isFromClient: Bool {
        switch self {
        case .request, .command, .confirmation: true
        case .response, .notification, .indication: false
        }
    }
}
