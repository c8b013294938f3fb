import BLEBytes

/// The Attribute Protocol, Core v5.4 Vol 3 Part F: typed PDUs for the analysis engine.
///
/// Values are `ByteRange`s (absolute file offsets) into the capture, never copies: decoding a
/// notification or a write allocates nothing. Use `ByteReader.copyBytes(_:)` or
/// `ByteReader.reader(for:)` on the frame's reader to get the bytes of a value you keep.
public enum ATT {
    /// The default ATT_MTU on LE before an MTU exchange, Core v5.4 Vol 3 Part F 3.2.8.
    public static let defaultLEMTU = 23
    /// A transaction not completed within 30 s has timed out (Core v5.4 Vol 3 Part F 3.3.3), in µs.
    public static let transactionTimeout: Int64 = 30_000_000
    /// Maximum length of an attribute value, Core v5.4 Vol 3 Part F 3.2.9.
    public static let maxAttributeValueLength = 512
    /// Bytes of an Authentication Signature (Sign Counter 4 + MAC 8), Core v5.4 Vol 3 Part H 2.4.5.
    public static let signatureLength = 12

    /// One decoded ATT PDU, Core v5.4 Vol 3 Part F 3.4. Unknown opcodes are `.unknown`, not errors.
    public enum PDU: Sendable, Hashable {
        /// 3.4.1.1. `requestOpcode` is the Request Opcode In Error, `handle` the Attribute Handle In Error.
        case errorResponse(requestOpcode: ATTOpcode, handle: UInt16, error: ATTErrorCode)
        /// 3.4.2.1, Client Rx MTU.
        case exchangeMTURequest(mtu: UInt16)
        /// 3.4.2.2, Server Rx MTU.
        case exchangeMTUResponse(mtu: UInt16)
        /// 3.4.3.1.
        case findInformationRequest(range: HandleRange)
        /// 3.4.3.2.
        case findInformationResponse(FindInformationResponse)
        /// 3.4.3.3.
        case findByTypeValueRequest(FindByTypeValueRequest)
        /// 3.4.3.4: Handles Information List (Found Attribute Handle, Group End Handle).
        case findByTypeValueResponse(handles: [HandleRange])
        /// 3.4.4.1.
        case readByTypeRequest(range: HandleRange, type: BluetoothUUID)
        /// 3.4.4.2.
        case readByTypeResponse(ReadByTypeResponse)
        /// 3.4.4.3.
        case readRequest(handle: UInt16)
        /// 3.4.4.4.
        case readResponse(value: ByteRange)
        /// 3.4.4.5. `offset` is the Value Offset.
        case readBlobRequest(handle: UInt16, offset: UInt16)
        /// 3.4.4.6: Part Attribute Value.
        case readBlobResponse(value: ByteRange)
        /// 3.4.4.7: Set Of Handles (two or more).
        case readMultipleRequest(handles: [UInt16])
        /// 3.4.4.8: Set Of Values, concatenated; splitting needs the value lengths from the database.
        case readMultipleResponse(values: ByteRange)
        /// 3.4.4.9.
        case readByGroupTypeRequest(range: HandleRange, type: BluetoothUUID)
        /// 3.4.4.10.
        case readByGroupTypeResponse(ReadByGroupTypeResponse)
        /// 3.4.4.11: Set Of Handles.
        case readMultipleVariableRequest(handles: [UInt16])
        /// 3.4.4.12: Length Value Tuple List.
        case readMultipleVariableResponse(ReadMultipleVariableResponse)
        /// 3.4.5.1.
        case writeRequest(handle: UInt16, value: ByteRange)
        /// 3.4.5.2.
        case writeResponse
        /// 3.4.5.3.
        case writeCommand(handle: UInt16, value: ByteRange)
        /// 3.4.5.4: `signature` is the 12-byte Authentication Signature (Sign Counter, MAC).
        case signedWriteCommand(handle: UInt16, value: ByteRange, signature: ByteRange)
        /// 3.4.6.1: `value` is the Part Attribute Value.
        case prepareWriteRequest(handle: UInt16, offset: UInt16, value: ByteRange)
        /// 3.4.6.2: echoes the request.
        case prepareWriteResponse(handle: UInt16, offset: UInt16, value: ByteRange)
        /// 3.4.6.3.
        case executeWriteRequest(flags: ExecuteWriteFlags)
        /// 3.4.6.4.
        case executeWriteResponse
        /// 3.4.7.1.
        case handleValueNotification(handle: UInt16, value: ByteRange)
        /// 3.4.7.2.
        case handleValueIndication(handle: UInt16, value: ByteRange)
        /// 3.4.7.3.
        case handleValueConfirmation
        /// 3.4.7.4: Handle Length Value Tuple List.
        case multipleHandleValueNotification(MultipleHandleValueNotification)
        /// An opcode the table does not know; `payload` is everything after the opcode.
        case unknown(ATTOpcode, payload: ByteRange)

        /// The opcode this PDU was decoded from.
        public var opcode: ATTOpcode {
            switch self {
            case .errorResponse: .errorResponse
            case .exchangeMTURequest: .exchangeMTURequest
            case .exchangeMTUResponse: .exchangeMTUResponse
            case .findInformationRequest: .findInformationRequest
            case .findInformationResponse: .findInformationResponse
            case .findByTypeValueRequest: .findByTypeValueRequest
            case .findByTypeValueResponse: .findByTypeValueResponse
            case .readByTypeRequest: .readByTypeRequest
            case .readByTypeResponse: .readByTypeResponse
            case .readRequest: .readRequest
            case .readResponse: .readResponse
            case .readBlobRequest: .readBlobRequest
            case .readBlobResponse: .readBlobResponse
            case .readMultipleRequest: .readMultipleRequest
            case .readMultipleResponse: .readMultipleResponse
            case .readByGroupTypeRequest: .readByGroupTypeRequest
            case .readByGroupTypeResponse: .readByGroupTypeResponse
            case .readMultipleVariableRequest: .readMultipleVariableRequest
            case .readMultipleVariableResponse: .readMultipleVariableResponse
            case .writeRequest: .writeRequest
            case .writeResponse: .writeResponse
            case .writeCommand: .writeCommand
            case .signedWriteCommand: .signedWriteCommand
            case .prepareWriteRequest: .prepareWriteRequest
            case .prepareWriteResponse: .prepareWriteResponse
            case .executeWriteRequest: .executeWriteRequest
            case .executeWriteResponse: .executeWriteResponse
            case .handleValueNotification: .handleValueNotification
            case .handleValueIndication: .handleValueIndication
            case .handleValueConfirmation: .handleValueConfirmation
            case .multipleHandleValueNotification: .multipleHandleValueNotification
            case let .unknown(op, _): op
            }
        }

        /// The single attribute handle the PDU names, when it names one.
        public var handle: UInt16? {
            switch self {
            case let .errorResponse(_, h, _), let .readRequest(h), let .readBlobRequest(h, _),
                 let .writeRequest(h, _), let .writeCommand(h, _), let .signedWriteCommand(h, _, _),
                 let .prepareWriteRequest(h, _, _), let .prepareWriteResponse(h, _, _),
                 let .handleValueNotification(h, _), let .handleValueIndication(h, _):
                h
            default:
                nil
            }
        }
    }

    /// A handle range (Starting Handle, Ending Handle), or a found handle and its group end.
    public struct HandleRange: Hashable, Sendable {
        public var start: UInt16
        public var end: UInt16
        @inlinable public init(start: UInt16, end: UInt16) { (self.start, self.end) = (start, end) }
        /// Core v5.4 Vol 3 Part F 3.4.3.1: a request with start 0 or start > end gets Invalid Handle.
        @inlinable public var isValid: Bool { start != 0 && start <= end }
    }

    /// A handle and a UUID (Find Information Response entries).
    public struct HandleUUID: Hashable, Sendable {
        public var handle: UInt16
        public var uuid: BluetoothUUID
        @inlinable public init(handle: UInt16, uuid: BluetoothUUID) { (self.handle, self.uuid) = (handle, uuid) }
    }

    /// A handle and a value (Read By Type Response elements, multiple notifications).
    public struct HandleValue: Hashable, Sendable {
        public var handle: UInt16
        public var value: ByteRange
        @inlinable public init(handle: UInt16, value: ByteRange) { (self.handle, self.value) = (handle, value) }
    }

    /// A group: its declaration handle, its end, and the declaration value (Read By Group Type Response).
    public struct GroupValue: Hashable, Sendable {
        public var handle: UInt16
        public var endGroupHandle: UInt16
        public var value: ByteRange
        @inlinable public init(handle: UInt16, endGroupHandle: UInt16, value: ByteRange) {
            (self.handle, self.endGroupHandle, self.value) = (handle, endGroupHandle, value)
        }
    }

    /// A declared length and the value bytes present (Read Multiple Variable Response).
    public struct LengthValue: Hashable, Sendable {
        /// Value Length as declared.
        public var length: UInt16
        /// The bytes present: fewer than `length` when the response was cut at ATT_MTU − 1
        /// (allowed for the last tuple, Core v5.4 Vol 3 Part F 3.4.4.12).
        public var value: ByteRange
        @inlinable public init(length: UInt16, value: ByteRange) { (self.length, self.value) = (length, value) }
        @inlinable public var isTruncated: Bool { value.count < Int(length) }
    }

    /// Find Information Response, 3.4.3.2.
    public struct FindInformationResponse: Hashable, Sendable {
        /// 0x01: 16-bit UUIDs, 0x02: 128-bit UUIDs.
        public var format: UInt8
        public var entries: [HandleUUID]
        public init(format: UInt8, entries: [HandleUUID]) { (self.format, self.entries) = (format, entries) }
    }

    /// Find By Type Value Request, 3.4.3.3.
    public struct FindByTypeValueRequest: Hashable, Sendable {
        public var range: HandleRange
        /// Attribute Type: a 16-bit UUID on the wire.
        public var type: BluetoothUUID
        public var value: ByteRange
        public init(range: HandleRange, type: BluetoothUUID, value: ByteRange) { (self.range, self.type, self.value) = (range, type, value) }
    }

    /// Read By Type Response, 3.4.4.2.
    public struct ReadByTypeResponse: Hashable, Sendable {
        /// Length of each handle-value pair (2 + value length), at least 2.
        public var length: UInt8
        public var elements: [HandleValue]
        public init(length: UInt8, elements: [HandleValue]) { (self.length, self.elements) = (length, elements) }
    }

    /// Read By Group Type Response, 3.4.4.10.
    public struct ReadByGroupTypeResponse: Hashable, Sendable {
        /// Length of each element (4 + value length), at least 4.
        public var length: UInt8
        public var elements: [GroupValue]
        public init(length: UInt8, elements: [GroupValue]) { (self.length, self.elements) = (length, elements) }
    }

    /// Read Multiple Variable Response, 3.4.4.12.
    public struct ReadMultipleVariableResponse: Hashable, Sendable {
        public var values: [LengthValue]
        /// True when the PDU ended inside a Value Length (one stray byte after the last tuple).
        public var cutInLength: Bool
        public init(values: [LengthValue], cutInLength: Bool = false) { (self.values, self.cutInLength) = (values, cutInLength) }
        /// True when the response was cut at ATT_MTU − 1 (allowed by 3.4.4.12): the last value is
        /// short, or a Value Length was cut.
        public var isTruncated: Bool { cutInLength || (values.last?.isTruncated ?? false) }
    }

    /// Multiple Handle Value Notification, 3.4.7.4.
    public struct MultipleHandleValueNotification: Hashable, Sendable {
        public var values: [HandleValue]
        public init(values: [HandleValue]) { self.values = values }
    }

    /// Execute Write Request flags, 3.4.6.3: 0x00 cancel all prepared writes, 0x01 write them.
    public struct ExecuteWriteFlags: RawRepresentable, Hashable, Sendable {
        public let rawValue: UInt8
        @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }
        public static let cancel = ExecuteWriteFlags(rawValue: 0x00)
        public static let write = ExecuteWriteFlags(rawValue: 0x01)
    }

    /// Decodes one ATT PDU (the whole L2CAP payload on the ATT channel).
    ///
    /// On return, `r.remaining` is the number of trailing bytes after a fixed-size PDU: a warning
    /// for the caller to annotate, not an error (STYLE 6.5.5). Variable-size PDUs consume everything.
    /// - Throws: `DecodeError` when the PDU is shorter than its opcode needs, or a length field is
    ///   inconsistent (Read By Type Response with Length 0, a list that is not a multiple of its
    ///   element size, a UUID of neither 2 nor 16 bytes…).
    public static func decode(_ r: inout ByteReader) throws(DecodeError) -> PDU {
        let op = try r.u8("Opcode")
        guard let entry = ATTDecoding.decoders[Int(op)] else {
            return .unknown(ATTOpcode(op), payload: r.takeRest())
        }
        try entry.size.check(r, entry.name)
        let pdu = try entry.decode(&r)
        // Fixed fields are read in place: step over them. A fixed-size PDU leaves any trailing bytes
        // unread (reported, not malformed); every other runs to the end of its L2CAP payload.
        switch entry.size {
        case let .exactly(n): try r.skip(n, entry.name)
        case .atLeast: r.skipRest()
        }
        return pdu
    }
}
