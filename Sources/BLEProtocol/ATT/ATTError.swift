import BLEBytes

/// An ATT error code, Core v5.4 Vol 3 Part F 3.4.1.1 (Table 3.4) and Core Specification
/// Supplement Part B 1.2 (common profile and service error codes). Open: any byte is a value.
public struct ATTErrorCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }
    @inlinable public init(_ rawValue: UInt8) { self.rawValue = rawValue }

    public static let invalidHandle = ATTErrorCode(0x01)
    public static let readNotPermitted = ATTErrorCode(0x02)
    public static let writeNotPermitted = ATTErrorCode(0x03)
    public static let invalidPDU = ATTErrorCode(0x04)
    public static let insufficientAuthentication = ATTErrorCode(0x05)
    public static let requestNotSupported = ATTErrorCode(0x06)
    public static let invalidOffset = ATTErrorCode(0x07)
    public static let insufficientAuthorization = ATTErrorCode(0x08)
    public static let prepareQueueFull = ATTErrorCode(0x09)
    public static let attributeNotFound = ATTErrorCode(0x0A)
    public static let attributeNotLong = ATTErrorCode(0x0B)
    public static let encryptionKeySizeTooShort = ATTErrorCode(0x0C)
    public static let invalidAttributeValueLength = ATTErrorCode(0x0D)
    public static let unlikelyError = ATTErrorCode(0x0E)
    public static let insufficientEncryption = ATTErrorCode(0x0F)
    public static let unsupportedGroupType = ATTErrorCode(0x10)
    public static let insufficientResources = ATTErrorCode(0x11)
    public static let databaseOutOfSync = ATTErrorCode(0x12)
    public static let valueNotAllowed = ATTErrorCode(0x13)
    public static let writeRequestRejected = ATTErrorCode(0xFC)
    public static let cccdImproperlyConfigured = ATTErrorCode(0xFD)
    public static let procedureAlreadyInProgress = ATTErrorCode(0xFE)
    public static let outOfRange = ATTErrorCode(0xFF)

    /// 0x80–0x9F: defined by a higher-layer specification (the application).
    @inlinable public var isApplicationError: Bool { (0x80...0x9F).contains(rawValue) }
    /// 0xE0–0xFF: common profile and service error codes (Supplement Part B 1.2).
    @inlinable public var isCommonProfileError: Bool { rawValue >= 0xE0 }
    /// The security errors a client may fix by pairing or encrypting: Insufficient Authentication,
    /// Authorization, Encryption, and Encryption Key Size Too Short (Core v5.4 Vol 3 Part F 3.4.1.1;
    /// Part C 10.3.2 says how a client answers each). The one place the set is written.
    public static let securityErrors: Set<ATTErrorCode> = [
        .insufficientAuthentication, .insufficientAuthorization, .encryptionKeySizeTooShort, .insufficientEncryption,
    ]
    /// One of `securityErrors`.
    public var isSecurityError: Bool { Self.securityErrors.contains(self) }

    /// `Insufficient Authentication`, `Application Error`, `Reserved`…
    public var name: String { Self.names.name(UInt64(rawValue)) ?? "Reserved" }

    /// `Insufficient Authentication (0x05)`, `Application Error (0x80)`.
    public var description: String { "\(name) (0x\(Hex.pad(rawValue, 2)))" }

    /// Names for display, with the ranges as a fallback.
    public static let names = NameTable([
        (0x01, "Invalid Handle"), (0x02, "Read Not Permitted"), (0x03, "Write Not Permitted"), (0x04, "Invalid PDU"),
        (0x05, "Insufficient Authentication"), (0x06, "Request Not Supported"), (0x07, "Invalid Offset"),
        (0x08, "Insufficient Authorization"), (0x09, "Prepare Queue Full"), (0x0A, "Attribute Not Found"),
        (0x0B, "Attribute Not Long"), (0x0C, "Encryption Key Size Too Short"), (0x0D, "Invalid Attribute Value Length"),
        (0x0E, "Unlikely Error"), (0x0F, "Insufficient Encryption"), (0x10, "Unsupported Group Type"),
        (0x11, "Insufficient Resources"), (0x12, "Database Out Of Sync"), (0x13, "Value Not Allowed"),
        (0xFC, "Write Request Rejected"), (0xFD, "Client Characteristic Configuration Descriptor Improperly Configured"),
        (0xFE, "Procedure Already in Progress"), (0xFF, "Out of Range"),
    ], fallback: { code in
        switch code {
        case 0x80...0x9F: "Application Error"
        case 0xE0...0xFB: "Reserved for Profiles and Services"
        default: nil
        }
    })
}

/// Error Response and MTU exchange rows, Core v5.4 Vol 3 Part F 3.4.1–3.4.2.
extension ATTDecoding {
    static let errorResponse: [ATTParam] = [
        ATTParam(.attRequestOpcode, "Request Opcode", spec: "Request Opcode In Error", .opcode, key: K.requestOpcodeInError),
        ATTParam("Handle", spec: "Attribute Handle In Error", .handle, key: K.attributeHandleInError),
        ATTParam(.errorCode, "Error", spec: "Error Code", .named(1, ATTErrorCode.names), key: K.errorCode),
    ]
    static let exchangeMTURequest: [ATTParam] = [ATTParam("Client RX MTU", spec: "Client Rx MTU", .uint(2), key: K.clientRxMTU)]
    static let exchangeMTUResponse: [ATTParam] = [ATTParam("Server RX MTU", spec: "Server Rx MTU", .uint(2), key: K.serverRxMTU)]

    static let controlRows: [ATTEntry] = [
        ATTEntry(.errorResponse, "Error Response", .response, errorResponse) { r throws(DecodeError) in
            .errorResponse(requestOpcode: ATTOpcode(try L.errorRequestOpcode.u8(r)), handle: try L.errorHandle.u16(r),
                           error: ATTErrorCode(try L.errorCode.u8(r)))
        },
        ATTEntry(.exchangeMTURequest, "Exchange MTU Request", .request, response: .exchangeMTUResponse, exchangeMTURequest) { r throws(DecodeError) in
            .exchangeMTURequest(mtu: try L.clientMTU.u16(r))
        },
        ATTEntry(.exchangeMTUResponse, "Exchange MTU Response", .response, exchangeMTUResponse) { r throws(DecodeError) in
            .exchangeMTUResponse(mtu: try L.serverMTU.u16(r))
        },
    ]
}
