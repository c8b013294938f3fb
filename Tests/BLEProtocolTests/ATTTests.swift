import Testing
import BLEBytes
@testable import BLEProtocol

private typealias S = ATTTestSupport
private func r(_ offset: Int, _ count: Int) -> ByteRange { ByteRange(offset: offset, count: count) }
private func range(_ a: UInt16, _ b: UInt16) -> ATT.HandleRange { ATT.HandleRange(start: a, end: b) }
private let u16 = BluetoothUUID.init(uuid16:)
/// 0000fff1-… as a 128-bit UUID, little-endian on the wire.
private let vendorWire = "fb 34 9b 5f 80 00 00 80 00 10 00 00 f1 ff 00 00"
private let heartRate128Wire = "fb 34 9b 5f 80 00 00 80 00 10 00 00 0d 18 00 00"

/// One valid vector per ATT opcode of Core v5.4 Vol 3 Part F 3.4.8, with its typed decode.
/// Offsets in `ByteRange`s are absolute: the opcode is at offset 0.
let attVectors: [(String, ATT.PDU)] = [
    // Error Response: Read Request (0x0a) on handle 0x000c failed with Insufficient Authentication
    ("01 0a 0c 00 05", .errorResponse(requestOpcode: .readRequest, handle: 0x000C, error: .insufficientAuthentication)),
    ("02 f7 00", .exchangeMTURequest(mtu: 247)),
    ("03 17 00", .exchangeMTUResponse(mtu: 23)),
    ("04 01 00 ff ff", .findInformationRequest(range: range(1, 0xFFFF))),
    // Find Information Response, format 1: 0x0003 → CCCD (0x2902), 0x0004 → User Description (0x2901)
    ("05 01 03 00 02 29 04 00 01 29", .findInformationResponse(.init(format: 1, entries: [
        .init(handle: 3, uuid: u16(0x2902)), .init(handle: 4, uuid: u16(0x2901))]))),
    // Find Information Response, format 2: 0x0010 → 0000fff1-0000-1000-8000-00805f9b34fb
    ("05 02 10 00 " + vendorWire, .findInformationResponse(.init(format: 2, entries: [.init(handle: 0x10, uuid: u16(0xFFF1))]))),
    // Find By Type Value Request: 0x0001-0xffff, type Primary Service, value Heart Rate (0d 18)
    ("06 01 00 ff ff 00 28 0d 18", .findByTypeValueRequest(.init(range: range(1, 0xFFFF), type: .primaryService, value: r(7, 2)))),
    // Find By Type Value Response: found 0x000a, group end 0x000f; found 0x0010, end 0xffff
    ("07 0a 00 0f 00 10 00 ff ff", .findByTypeValueResponse(handles: [range(0x0A, 0x0F), range(0x10, 0xFFFF)])),
    ("08 01 00 ff ff 03 28", .readByTypeRequest(range: range(1, 0xFFFF), type: .characteristic)),
    ("08 01 00 ff ff " + vendorWire, .readByTypeRequest(range: range(1, 0xFFFF), type: u16(0xFFF1))),
    // Read By Type Response, length 7: 0x0002 → [props 0x02, value 0x0003, Device Name 0x2a00],
    //                                   0x0004 → [props 0x02, value 0x0005, Appearance 0x2a01]
    ("09 07 02 00 02 03 00 00 2a 04 00 02 05 00 01 2a", .readByTypeResponse(.init(length: 7, elements: [
        .init(handle: 2, value: r(4, 5)), .init(handle: 4, value: r(11, 5))]))),
    ("0a 03 00", .readRequest(handle: 3)),
    ("0b 48 65 6c 6c 6f", .readResponse(value: r(1, 5))),
    ("0b", .readResponse(value: r(1, 0))),
    ("0c 03 00 16 00", .readBlobRequest(handle: 3, offset: 22)),
    ("0d 01 02", .readBlobResponse(value: r(1, 2))),
    ("0e 03 00 05 00", .readMultipleRequest(handles: [3, 5])),
    ("0f 01 02 03", .readMultipleResponse(values: r(1, 3))),
    ("10 01 00 ff ff 00 28", .readByGroupTypeRequest(range: range(1, 0xFFFF), type: .primaryService)),
    // Read By Group Type Response, length 6: 0x0001-0x0005 GAP (1800), 0x0006-0x000b Heart Rate (180d)
    ("11 06 01 00 05 00 00 18 06 00 0b 00 0d 18", .readByGroupTypeResponse(.init(length: 6, elements: [
        .init(handle: 1, endGroupHandle: 5, value: r(6, 2)), .init(handle: 6, endGroupHandle: 0x0B, value: r(12, 2))]))),
    ("12 0d 00 01 00", .writeRequest(handle: 0x0D, value: r(3, 2))),
    ("13", .writeResponse),
    // Prepare Write Request: handle 0x000e, offset 18, part value "AB"
    ("16 0e 00 12 00 41 42", .prepareWriteRequest(handle: 0x0E, offset: 18, value: r(5, 2))),
    ("17 0e 00 12 00 41 42", .prepareWriteResponse(handle: 0x0E, offset: 18, value: r(5, 2))),
    ("18 01", .executeWriteRequest(flags: .write)),
    ("18 00", .executeWriteRequest(flags: .cancel)),
    ("19", .executeWriteResponse),
    // Handle Value Notification: handle 0x000c, Heart Rate Measurement flags 0x06, 72 bpm
    ("1b 0c 00 06 48", .handleValueNotification(handle: 0x0C, value: r(3, 2))),
    ("1d 0e 00 01 00 ff ff", .handleValueIndication(handle: 0x0E, value: r(3, 4))),
    ("1e", .handleValueConfirmation),
    ("20 03 00 05 00", .readMultipleVariableRequest(handles: [3, 5])),
    // Read Multiple Variable Response: [len 2: aa bb], [len 1: cc]
    ("21 02 00 aa bb 01 00 cc", .readMultipleVariableResponse(.init(values: [.init(length: 2, value: r(3, 2)), .init(length: 1, value: r(7, 1))]))),
    // Read Multiple Variable Response cut at ATT_MTU - 1: the last value declares 4 bytes, 2 present
    ("21 01 00 aa 04 00 bb cc", .readMultipleVariableResponse(.init(values: [.init(length: 1, value: r(3, 1)), .init(length: 4, value: r(6, 2))]))),
    // Multiple Handle Value Notification: 0x000c [06 48], 0x000e [64]
    ("23 0c 00 02 00 06 48 0e 00 01 00 64", .multipleHandleValueNotification(.init(values: [
        .init(handle: 0x0C, value: r(5, 2)), .init(handle: 0x0E, value: r(11, 1))]))),
    ("52 0d 00 01 00", .writeCommand(handle: 0x0D, value: r(3, 2))),
    ("52 0d 00", .writeCommand(handle: 0x0D, value: r(3, 0))),
    // Signed Write Command: handle 0x000d, value 01 02, sign counter 1, MAC 8 bytes
    ("d2 0d 00 01 02 01 00 00 00 a1 a2 a3 a4 a5 a6 a7 a8", .signedWriteCommand(handle: 0x0D, value: r(3, 2), signature: r(5, 12))),
    ("99 01 02", .unknown(ATTOpcode(0x99), payload: r(1, 2))),
    ("ff", .unknown(ATTOpcode(0xFF), payload: r(1, 0))),
]

/// Malformed vectors: the typed decoder must throw this error (kind and absolute offset).
let attMalformed: [(String, DecodeError.Kind, Int)] = [
    // PureSwift's crash: Read By Type Response with Length 0 → invalid value at the Length byte
    ("09 00 01 00 aa", .invalidValue(0), 1),
    ("09 01 01 00", .invalidValue(1), 1),
    ("09 04", .lengthMismatch(declared: 4, actual: 0), 2),
    ("09 03 01 00 aa 02", .lengthMismatch(declared: 3, actual: 4), 2),
    ("11 03 01 00 05", .invalidValue(3), 1),
    ("11 06 01 00 05 00 00 18 06", .lengthMismatch(declared: 6, actual: 7), 2),
    ("05 03 01 00 02 29", .invalidValue(3), 1),
    ("05 01 01 00 02 29 03", .lengthMismatch(declared: 4, actual: 5), 2),
    ("0a 03", .truncated(needed: 2, available: 1), 1),
    ("01 0a 0c 00", .truncated(needed: 4, available: 3), 1),
    ("08 01 00 ff ff 03", .truncated(needed: 6, available: 5), 1),
    ("08 01 00 ff ff 03 28 00", .invalidValue(3), 5),
    ("0e 03 00", .truncated(needed: 4, available: 2), 1),
    ("0e 03 00 05 00 07", .lengthMismatch(declared: 2, actual: 5), 1),
    ("23 0c 00 05 00 06", .truncated(needed: 5, available: 1), 5),
    ("d2 0d 00 01 02 03", .truncated(needed: 14, available: 5), 1),
    ("1b 0c", .truncated(needed: 2, available: 1), 1),
    ("", .truncated(needed: 1, available: 0), 0),
]

@Suite("ATT")
struct ATTTests {
    @Test(arguments: attVectors)
    func decodesEveryOpcode(hex: String, expected: ATT.PDU) {
        let (result, remaining) = S.run(S.bytes(hex)) { r throws(DecodeError) in try ATT.decode(&r) }
        #expect(result == .success(expected))
        #expect(remaining == 0)
        if case let .success(pdu) = result { #expect(pdu.opcode.rawValue == S.bytes(hex).first) }
    }

    @Test func everyOpcodeOfTheSpecHasARowAndAVector() {
        let spec: [UInt8] = [0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x0E, 0x0F, 0x10,
                             0x11, 0x12, 0x13, 0x16, 0x17, 0x18, 0x19, 0x1B, 0x1D, 0x1E, 0x20, 0x21, 0x23, 0x52, 0xD2]
        #expect(ATTDecoding.knownOpcodes.map(\.rawValue) .sorted() == spec)
        #expect(ATTDecoding.duplicateOpcodes.isEmpty)
        let covered = Set(attVectors.compactMap { S.bytes($0.0).first })
        for op in spec { #expect(covered.contains(op), "no vector for opcode 0x\(Hex.pad(op, 2))") }
    }

    @Test(arguments: attMalformed)
    func rejectsMalformed(hex: String, kind: DecodeError.Kind, offset: Int) {
        let result = S.run(hex) { r throws(DecodeError) in try ATT.decode(&r) }
        #expect(result == .failure(DecodeError(kind: kind, offset: offset, field: "")))
    }

    @Test func pureSwiftReadByTypeCrashThrows() {
        #expect(throws: DecodeError(kind: .invalidValue(0), offset: 1, field: "")) {
            try S.bytes("09 00 01 00 aa").withUnsafeBytes { raw in
                var r = ByteReader(raw)
                _ = try ATT.decode(&r)
            }
        }
        let layer = S.show("09 00 01 00 aa") { ATTDisplay.decode(&$0) }
        #expect(layer.name == "Read By Type Response")
        #expect(layer.error == DecodeError(kind: .invalidValue(0), offset: 1, field: ""))
    }

    @Test func absoluteOffsetsFollowTheReaderBase() {
        // The same notification 100 bytes into a capture: ranges point into the file.
        let (result, _) = S.run(S.bytes("1b 0c 00 06 48"), base: 100) { r throws(DecodeError) in try ATT.decode(&r) }
        #expect(result == .success(.handleValueNotification(handle: 0x0C, value: r(103, 2))))
        let bad = S.run(S.bytes("09 00 01 00"), base: 100) { r throws(DecodeError) in try ATT.decode(&r) }.result
        #expect(bad == .failure(DecodeError(kind: .invalidValue(0), offset: 101, field: "")))
    }

    @Test func valueRangesCopyBackToBytes() {
        let bytes = S.bytes("09 07 02 00 02 03 00 00 2a 04 00 02 05 00 01 2a")
        bytes.withUnsafeBytes { raw in
            var reader = ByteReader(raw)
            guard case let .readByTypeResponse(rsp)? = try? ATT.decode(&reader) else {
                Issue.record("not a Read By Type Response")
                return
            }
            let frame = ByteReader(raw)
            #expect(rsp.elements.map(\.handle) == [2, 4])
            #expect(frame.copyBytes(rsp.elements[0].value) == [0x02, 0x03, 0x00, 0x00, 0x2A])
            #expect(frame.copyBytes(rsp.elements[1].value) == [0x02, 0x05, 0x00, 0x01, 0x2A])
            #expect(frame.copyBytes(ByteRange(offset: 10, count: 7)) == nil)   // past the end
            #expect(frame.reader(for: ByteRange(offset: -1, count: 1)) == nil)
        }
    }

    @Test func trailingBytesAfterAFixedPDUAreLeftAndNoted() {
        let (result, remaining) = S.run(S.bytes("0a 03 00 ff")) { r throws(DecodeError) in try ATT.decode(&r) }
        #expect(result == .success(.readRequest(handle: 3)))
        #expect(remaining == 1)
        let layer = S.show("0a 03 00 ff") { ATTDisplay.decode(&$0) }
        #expect(layer.error == nil)
        #expect(layer.notes == ["1 trailing byte: ff"])
    }

    @Test func readMultipleVariableTruncation() {
        guard case let .success(.readMultipleVariableResponse(rsp)) = S.run("21 01 00 aa 04 00 bb cc", { r throws(DecodeError) in try ATT.decode(&r) }) else {
            Issue.record("no decode")
            return
        }
        #expect(rsp.isTruncated)
        #expect(rsp.values[1].isTruncated)
        guard case let .success(.readMultipleVariableResponse(cut)) = S.run("21 01 00 aa 04", { r throws(DecodeError) in try ATT.decode(&r) }) else {
            Issue.record("no decode")
            return
        }
        #expect(cut.cutInLength && cut.isTruncated && cut.values.count == 1)
    }

    @Test func pduHandleAccessor() {
        #expect(ATT.PDU.handleValueNotification(handle: 7, value: r(0, 0)).handle == 7)
        #expect(ATT.PDU.errorResponse(requestOpcode: .writeRequest, handle: 9, error: .writeNotPermitted).handle == 9)
        #expect(ATT.PDU.exchangeMTURequest(mtu: 23).handle == nil)
    }
}

/// Every ATT PDU is built by key from its table row (`ATTEncoding.pdu`): the bytes are the vectors
/// above (values read off Core v5.4 Vol 3 Part F 3.4), so the row that decodes a PDU also lays it out.
@Suite("ATT encoding")
struct ATTEncodingTests {
    typealias K = ATT.Key
    static let byKey: [(ATTOpcode, [ParamKey: ATTEncoding.Value], String)] = [
        (.errorResponse, [K.requestOpcodeInError: .int(0x0A), K.attributeHandleInError: .int(0x0C), K.errorCode: .int(0x05)], "01 0a 0c 00 05"),
        (.exchangeMTURequest, [K.clientRxMTU: .int(247)], "02 f7 00"),
        (.exchangeMTUResponse, [K.serverRxMTU: .int(23)], "03 17 00"),
        (.findInformationRequest, [K.startingHandle: .int(1), K.endingHandle: .int(0xFFFF)], "04 01 00 ff ff"),
        (.findInformationResponse, [K.format: .int(1), K.informationData: .bytes(S.bytes("03 00 02 29 04 00 01 29"))], "05 01 03 00 02 29 04 00 01 29"),
        (.findByTypeValueRequest, [K.startingHandle: .int(1), K.endingHandle: .int(0xFFFF), K.attributeType: .bytes([0x00, 0x28]),
                                   K.attributeValue: .bytes([0x0D, 0x18])], "06 01 00 ff ff 00 28 0d 18"),
        (.readByTypeRequest, [K.startingHandle: .int(1), K.endingHandle: .int(0xFFFF), K.attributeType: .bytes([0x03, 0x28])], "08 01 00 ff ff 03 28"),
        (.readRequest, [K.attributeHandle: .int(3)], "0a 03 00"),
        (.readBlobRequest, [K.attributeHandle: .int(3), K.valueOffset: .int(22)], "0c 03 00 16 00"),
        (.readMultipleVariableRequest, [K.setOfHandles: .bytes([3, 0, 5, 0])], "20 03 00 05 00"),
        (.writeRequest, [K.attributeHandle: .int(0x0D), K.attributeValue: .bytes([1, 0])], "12 0d 00 01 00"),
        (.prepareWriteRequest, [K.attributeHandle: .int(0x0E), K.valueOffset: .int(18), K.partAttributeValue: .bytes([0x41, 0x42])], "16 0e 00 12 00 41 42"),
        (.executeWriteRequest, [K.flags: .int(1)], "18 01"),
        (.handleValueConfirmation, [:], "1e"),
        (.signedWriteCommand, [K.attributeHandle: .int(0x0D), K.attributeValue: .bytes([1, 2]), K.signCounter: .int(1),
                               K.mac: .bytes(S.bytes("a1 a2 a3 a4 a5 a6 a7 a8"))], "d2 0d 00 01 02 01 00 00 00 a1 a2 a3 a4 a5 a6 a7 a8"),
    ]

    @Test(arguments: byKey.indices)
    func everyKindOfParameterEncodesByKey(_ i: Int) throws {
        let (op, values, hex) = Self.byKey[i]
        #expect(try ATTEncoding.pdu(op, values) == S.bytes(hex))
        // The row's keys are the ones given, in wire order.
        #expect(Set(ATTDecoding.parameterKeys(op)) == Set(values.keys))
    }

    @Test func aMissingKeyOrAnUnknownOpcodeIsRefused() {
        #expect(throws: ATTEncoding.Failure.missingParameter("Error")) {
            try ATTEncoding.pdu(.errorResponse, [K.requestOpcodeInError: .int(0x0A), K.attributeHandleInError: .int(0x0C)])
        }
        #expect(throws: ATTEncoding.Failure.unknownCommand(0x99)) { try ATTEncoding.pdu(ATTOpcode(0x99)) }
        // A fixed field given bytes of another width is refused, not padded.
        #expect(throws: ATTEncoding.Failure.unsupportedSpec("MAC")) {
            try ATTEncoding.pdu(.signedWriteCommand, [K.attributeHandle: .int(1), K.attributeValue: .bytes([]), K.signCounter: .int(0), K.mac: .bytes([1])])
        }
    }

    /// The server PDUs the twin sends, each decoded back by the same table.
    @Test func theTwinsPDUsDecodeBack() throws {
        func decode(_ b: [UInt8]) throws -> ATT.PDU { try b.withUnsafeBytes { raw throws in var rd = ByteReader(raw); return try ATT.decode(&rd) } }
        #expect(try decode(ATTEncoding.errorResponse(request: .readRequest, handle: 0x0C, .insufficientAuthentication))
            == .errorResponse(requestOpcode: .readRequest, handle: 0x0C, error: .insufficientAuthentication))
        #expect(try decode(ATTEncoding.exchangeMTUResponse(serverMTU: 185)) == .exchangeMTUResponse(mtu: 185))
        #expect(ATTEncoding.findInformationResponse([(3, u16(0x2902)), (4, u16(0x2901))]) == S.bytes("05 01 03 00 02 29 04 00 01 29"))
        #expect(ATTEncoding.findByTypeValueResponse([(0x0A, 0x0F), (0x10, 0xFFFF)]) == S.bytes("07 0a 00 0f 00 10 00 ff ff"))
        #expect(ATTEncoding.readByTypeResponse([(2, S.bytes("02 03 00 00 2a")), (4, S.bytes("02 05 00 01 2a"))])
            == S.bytes("09 07 02 00 02 03 00 00 2a 04 00 02 05 00 01 2a"))
        #expect(ATTEncoding.readByGroupTypeResponse([(1, 5, [0x00, 0x18]), (6, 0x0B, [0x0D, 0x18])]) == S.bytes("11 06 01 00 05 00 00 18 06 00 0b 00 0d 18"))
        #expect(ATTEncoding.readResponse(S.bytes("48 65 6c 6c 6f")[...]) == S.bytes("0b 48 65 6c 6c 6f"))
        #expect(ATTEncoding.readResponse([1, 2][...], blob: true) == S.bytes("0d 01 02"))
        #expect(ATTEncoding.writeResponse() == [0x13])
        #expect(ATTEncoding.executeWriteResponse() == [0x19])
        #expect(ATTEncoding.prepareWriteResponse(handle: 0x0E, offset: 18, part: [0x41, 0x42][...]) == S.bytes("17 0e 00 12 00 41 42"))
        #expect(ATTEncoding.handleValue(0x0C, [0x06, 0x48][...], indication: false) == S.bytes("1b 0c 00 06 48"))
        #expect(ATTEncoding.handleValue(0x0E, [0x01, 0x00, 0xFF, 0xFF][...], indication: true) == S.bytes("1d 0e 00 01 00 ff ff"))
    }

    /// The size rule of each row is its field list's width: the spec's minimum sizes (3.4).
    @Test func sizeRulesComeFromTheFieldLists() {
        let expected: [(ATTOpcode, Int, Bool)] = [
            (.errorResponse, 4, true), (.exchangeMTURequest, 2, true), (.findInformationRequest, 4, true),
            (.findInformationResponse, 5, false), (.findByTypeValueRequest, 6, false), (.findByTypeValueResponse, 4, false),
            (.readByTypeRequest, 6, false), (.readByTypeResponse, 1, false), (.readRequest, 2, true), (.readResponse, 0, false),
            (.readBlobRequest, 4, true), (.readMultipleRequest, 4, false), (.readMultipleVariableResponse, 2, false),
            (.writeRequest, 2, false), (.writeResponse, 0, true), (.prepareWriteRequest, 4, false), (.executeWriteRequest, 1, true),
            (.signedWriteCommand, 2 + ATT.signatureLength, false), (.multipleHandleValueNotification, 4, false),
        ]
        for (op, minimum, fixed) in expected {
            let size = ATTDecoding.index[op.rawValue]?.size
            #expect(size == (fixed ? PDUSize.exactly(minimum) : .atLeast(minimum)), "\(op)")
        }
    }
}

@Suite("ATT opcode metadata")
struct ATTOpcodeTests {
    @Test(arguments: [
        (ATTOpcode.exchangeMTURequest, ATTOpcode.exchangeMTUResponse), (.findInformationRequest, .findInformationResponse),
        (.findByTypeValueRequest, .findByTypeValueResponse), (.readByTypeRequest, .readByTypeResponse),
        (.readRequest, .readResponse), (.readBlobRequest, .readBlobResponse), (.readMultipleRequest, .readMultipleResponse),
        (.readByGroupTypeRequest, .readByGroupTypeResponse), (.writeRequest, .writeResponse),
        (.prepareWriteRequest, .prepareWriteResponse), (.executeWriteRequest, .executeWriteResponse),
        (.readMultipleVariableRequest, .readMultipleVariableResponse), (.handleValueIndication, .handleValueConfirmation),
    ])
    func requestResponsePairs(request: ATTOpcode, response: ATTOpcode) {
        #expect(request.responseOpcode == response)
        #expect(response.requestOpcode == request)
        #expect(response.responseOpcode == nil)
    }

    @Test func kindsAndBits() {
        #expect(ATTOpcode.readRequest.kind == .request)
        #expect(ATTOpcode.readResponse.kind == .response)
        #expect(ATTOpcode.errorResponse.kind == .response)
        #expect(ATTOpcode.writeCommand.kind == .command)
        #expect(ATTOpcode.signedWriteCommand.kind == .command)
        #expect(ATTOpcode.handleValueNotification.kind == .notification)
        #expect(ATTOpcode.multipleHandleValueNotification.kind == .notification)
        #expect(ATTOpcode.handleValueIndication.kind == .indication)
        #expect(ATTOpcode.handleValueConfirmation.kind == .confirmation)
        #expect(ATTOpcode(0x99).kind == nil)
        #expect(ATTOpcode.writeCommand.isCommand && !ATTOpcode.writeCommand.isSigned)
        #expect(ATTOpcode.signedWriteCommand.isCommand && ATTOpcode.signedWriteCommand.isSigned)
        #expect(ATTOpcode.signedWriteCommand.method == ATTOpcode.writeRequest.method)
        #expect(!ATTOpcode.writeRequest.isCommand)
        #expect(ATTOpcode.writeRequest.responseOpcode == .writeResponse)
        #expect(ATTOpcode.writeCommand.responseOpcode == nil)
        #expect(ATTOpcode.handleValueNotification.responseOpcode == nil)
    }

    @Test func names() {
        #expect(ATTOpcode.readByTypeRequest.name == "Read By Type Request")
        #expect(ATTOpcode.readMultipleVariableResponse.name == "Read Multiple Variable Response")
        #expect(ATTOpcode.multipleHandleValueNotification.name == "Multiple Handle Value Notification")
        #expect(ATTOpcode.signedWriteCommand.description == "Signed Write Command (0xd2)")
        #expect(ATTOpcode(0x99).description == "Unknown (0x99)")
        #expect(!ATTOpcode(0x99).isKnown)
    }
}

@Suite("ATT error codes")
struct ATTErrorCodeTests {
    @Test(arguments: [
        (UInt8(0x01), "Invalid Handle (0x01)"), (0x05, "Insufficient Authentication (0x05)"),
        (0x0C, "Encryption Key Size Too Short (0x0c)"), (0x0D, "Invalid Attribute Value Length (0x0d)"),
        (0x0E, "Unlikely Error (0x0e)"), (0x0F, "Insufficient Encryption (0x0f)"), (0x11, "Insufficient Resources (0x11)"),
        (0x12, "Database Out Of Sync (0x12)"), (0x13, "Value Not Allowed (0x13)"),
        (0x80, "Application Error (0x80)"), (0x9F, "Application Error (0x9f)"),
        (0x14, "Reserved (0x14)"), (0xA0, "Reserved (0xa0)"), (0xE0, "Reserved for Profiles and Services (0xe0)"),
        (0xFC, "Write Request Rejected (0xfc)"),
        (0xFD, "Client Characteristic Configuration Descriptor Improperly Configured (0xfd)"),
        (0xFE, "Procedure Already in Progress (0xfe)"), (0xFF, "Out of Range (0xff)"),
    ])
    func names(code: UInt8, expected: String) {
        #expect(ATTErrorCode(code).description == expected)
    }

    @Test func everyCodeOfTheSpecIsNamed() {
        for code in UInt8(0x01)...0x13 { #expect(ATTErrorCode(code).name != "Reserved") }
        #expect(ATTErrorCode(0x80).isApplicationError && !ATTErrorCode(0xA0).isApplicationError)
        #expect(ATTErrorCode.insufficientEncryption.isSecurityError)
        #expect(ATTErrorCode(0xFD).isCommonProfileError)
    }

    @Test(arguments: [
        ("01 0a 0c 00 05", "Insufficient Authentication (0x05)"), ("01 12 0d 00 0d", "Invalid Attribute Value Length (0x0d)"),
        ("01 0a 0c 00 0f", "Insufficient Encryption (0x0f)"), ("01 12 0d 00 80", "Application Error (0x80)"),
        ("01 12 0f 00 fd", "Client Characteristic Configuration Descriptor Improperly Configured (0xfd)"),
    ])
    func errorResponseDisplay(hex: String, expected: String) {
        let layer = S.show(hex) { ATTDisplay.decode(&$0) }
        #expect(layer.name == "Error Response")
        #expect(S.has(layer, "Error: \(expected)"))
        #expect(S.has(layer, "Request Opcode: "))
    }
}

@Suite("ATT display")
struct ATTDisplayTests {
    @Test(arguments: attVectors)
    func everyVectorDisplaysWithItsName(hex: String, expected: ATT.PDU) {
        let layer = S.show(hex) { ATTDisplay.decode(&$0) }
        #expect(layer.protocolName.description == "ATT")
        #expect(layer.name == expected.opcode.name)
        #expect(layer.error == nil)
        #expect(layer.notes.isEmpty)
        #expect(layer.code == "0x" + Hex.pad(expected.opcode.rawValue, 2))
    }

    @Test(arguments: attMalformed)
    func malformedIsAnErrorNotATrap(hex: String, kind: DecodeError.Kind, offset: Int) {
        let layer = S.show(hex) { ATTDisplay.decode(&$0) }
        #expect(layer.error == DecodeError(kind: kind, offset: offset, field: ""))
    }

    static let heartRate = ATTDisplayContext(
        describeHandle: { $0 == 0x0D ? "Client Characteristic Configuration (0x2902)" : nil },
        valueUUID: { h in
            switch h {
            case 0x0C: BluetoothUUID(uuid16: 0x2A37)
            case 0x0D: BluetoothUUID(uuid16: 0x2902)
            case 0x03: BluetoothUUID(uuid16: 0x2A00)
            default: nil
            }
        })

    @Test func notificationNamesTheHandleAndDecodesTheValue() {
        let layer = S.show("1b 0c 00 16 48 00 04") { ATTDisplay.decode(&$0, context: Self.heartRate) }
        let lines = S.lines(layer)
        #expect(lines.contains("Handle: 0x000c"))
        #expect(lines.contains("Attribute: Heart Rate Measurement (0x2A37) @0x000C"))
        #expect(lines.contains("Value: 16 48 00 04"))
        #expect(S.has(layer, "Heart Rate: 72"))
        #expect(S.has(layer, "RR-Interval: 1.0 s"))
    }

    @Test func withoutContextTheValueIsRaw() {
        let layer = S.show("1b 0c 00 06 48") { ATTDisplay.decode(&$0) }
        #expect(S.lines(layer) == ["Handle: 0x000c", "Value: 06 48"])
    }

    @Test func cccdWriteIsDecoded() {
        let layer = S.show("12 0d 00 01 00") { ATTDisplay.decode(&$0, context: Self.heartRate) }
        #expect(S.has(layer, "Attribute: Client Characteristic Configuration (0x2902) @0x000D"))
        #expect(S.has(layer, "Configuration: 0x0001 [Notification]"))
    }

    @Test func readResponseUsesThePairedRequestHandle() {
        var ctx = Self.heartRate
        ctx.requestHandle = 3
        let layer = S.show("0b 48 52 4d") { ATTDisplay.decode(&$0, context: ctx) }
        #expect(S.has(layer, "Attribute: Device Name (0x2A00) @0x0003"))
        #expect(S.has(layer, "Name: HRM"))
    }

    @Test func primaryServiceDiscoveryShowsServiceNames() {
        let layer = S.show("11 06 01 00 05 00 00 18 06 00 0b 00 0d 18") { ATTDisplay.decode(&$0) }
        #expect(S.has(layer, "UUID: Generic Access (0x1800)"))
        #expect(S.has(layer, "UUID: Heart Rate (0x180D)"))
        let long = S.show("11 14 06 00 0b 00 " + heartRate128Wire) { ATTDisplay.decode(&$0) }
        #expect(S.has(long, "UUID: Heart Rate (0000180d-0000-1000-8000-00805f9b34fb)"))
    }

    @Test func characteristicDiscoveryShowsDeclarations() {
        // 0x000b: Read|Notify, value handle 0x000c, Heart Rate Measurement
        let layer = S.show("09 07 0b 00 12 0c 00 37 2a") { ATTDisplay.decode(&$0) }
        #expect(S.has(layer, "Properties: 0x12 [Read, Notify]"))
        #expect(S.has(layer, "Value Handle: 0x000c"))
        #expect(S.has(layer, "UUID: Heart Rate Measurement (0x2A37)"))
        // With the paired request's type, no guessing is needed.
        let ctx = ATTDisplayContext(requestedType: .characteristic)
        let layer2 = S.show("09 07 0b 00 3a 0e 00 39 2a") { ATTDisplay.decode(&$0, context: ctx) }
        #expect(S.has(layer2, "Properties: 0x3a [Read, Write, Notify, Indicate]"))
    }

    @Test func findInformationShowsUUIDNames() {
        let layer = S.show("05 01 03 00 02 29 04 00 01 29") { ATTDisplay.decode(&$0) }
        #expect(S.has(layer, "Format: UUID-16 (0x01)"))
        #expect(S.has(layer, "UUID: Client Characteristic Configuration (0x2902)"))
        #expect(S.has(layer, "UUID: Characteristic User Description (0x2901)"))
    }

    @Test func findByTypeValueDecodesTheServiceUUID() {
        let layer = S.show("06 01 00 ff ff 00 28 0d 18") { ATTDisplay.decode(&$0) }
        #expect(S.has(layer, "Attribute Type: Primary Service (0x2800)"))
        #expect(S.has(layer, "UUID: Heart Rate (0x180D)"))
    }

    @Test func signedWriteShowsTheSignature() {
        let layer = S.show("d2 0d 00 01 02 01 00 00 00 a1 a2 a3 a4 a5 a6 a7 a8") { ATTDisplay.decode(&$0) }
        #expect(S.lines(layer) == ["Handle: 0x000d", "Value: 01 02", "Sign Counter: 1", "MAC: a1 a2 a3 a4 a5 a6 a7 a8"])
    }

    @Test func unknownOpcodeIsRawNotAnError() {
        let layer = S.show("99 01 02") { ATTDisplay.decode(&$0) }
        #expect(layer.name == "Unknown" && layer.error == nil)
        #expect(S.lines(layer) == ["Data: 01 02"])
    }

    @Test func tooShortIsNoted() {
        let layer = S.show("12 0d") { ATTDisplay.decode(&$0) }
        #expect(layer.name == "Write Request")
        #expect(layer.error != nil)
        #expect(S.lines(layer) == ["Data: 0d"])
    }
}

@Suite("ATT robustness")
struct ATTRobustnessTests {
    /// Every prefix decodes or throws (never traps): the empty one is refused, a valid vector whole is
    /// accepted, a malformed one whole is refused, by the typed and the display decoder alike.
    @Test func everyPrefixOfEveryVectorDecodesOrThrows() {
        let cases = attVectors.map { ($0.0, true) } + attMalformed.map { ($0.0, false) }
        for (hex, valid) in cases {
            let bytes = S.bytes(hex)
            let typed = S.prefixOutcomes(bytes) { r in (try? ATT.decode(&r)) != nil }
            #expect(typed.first == false && typed.last == valid, "\(hex): \(typed)")
            let shown = S.prefixOutcomes(bytes) { r in ATTDisplay.decode(&r, context: ATTDisplayTests.heartRate).error == nil }
            #expect(shown.first == false && shown.last == valid, "\(hex): \(shown)")
        }
    }

    @Test func typedAndDisplayAgreeOnEveryPrefix() {
        for (hex, _) in attVectors {
            let bytes = S.bytes(hex)
            for n in 0...bytes.count {
                let prefix = Array(bytes[..<n])
                let typed = S.run(prefix) { r throws(DecodeError) in try ATT.decode(&r) }.result
                let layer = S.show(prefix) { ATTDisplay.decode(&$0) }
                switch typed {
                case .success: #expect(layer.error == nil, "\(Hex.string(prefix))")
                case let .failure(e): #expect(layer.error == e, "\(Hex.string(prefix))")
                }
            }
        }
    }

    static let leads = ATTDecoding.knownOpcodes.map(\.rawValue)

    @Test func randomBuffersThroughTheTypedDecoder() {
        let o = S.fuzzOutcomes(seed: 0xA77, leads: Self.leads) { r in (try? ATT.decode(&r)) != nil }
        #expect(o.both, "\(o)")
    }

    @Test func randomBuffersThroughTheDisplayDecoder() {
        let o = S.fuzzOutcomes(seed: 0xA78, leads: Self.leads) { r in ATTDisplay.decode(&r, context: ATTDisplayTests.heartRate).error == nil }
        #expect(o.both, "\(o)")
    }

    @Test func randomBuffersAgree() {
        S.fuzz(seed: 0xA79, count: 5_000, leads: Self.leads) { r in
            let start = r
            var copy = start
            let typed: DecodeError?
            do throws(DecodeError) { _ = try ATT.decode(&copy); typed = nil } catch { typed = error }
            var d = start
            let layer = ATTDisplay.decode(&d)
            #expect(layer.error == typed, "\(Hex.string(start.remainingBytes))")
        }
    }
}
