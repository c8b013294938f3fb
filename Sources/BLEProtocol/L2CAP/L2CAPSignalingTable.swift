import BLEBytes

/// One row of the L2CAP signalling table: code, spec name, paired response, size rule of the data
/// (checked once by the dispatcher), typed decoder and display decoder.
struct L2CAPSignalingEntry: Sendable {
    typealias Decode = @Sendable (inout ByteReader) throws(DecodeError) -> L2CAP.SignalingCommand
    typealias Display = @Sendable (inout ByteReader, inout [Field]) throws(DecodeError) -> Void
    let code: L2CAP.SignalingCode
    let name: StaticString
    let response: L2CAP.SignalingCode?
    let size: PDUSize
    let decode: Decode
    let display: Display

    init(_ code: L2CAP.SignalingCode, _ name: StaticString, response: L2CAP.SignalingCode? = nil, size: PDUSize,
         _ params: [Param], decode: @escaping Decode) {
        self.init(code, name, response: response, size: size, decode: decode,
                  display: { r, f throws(DecodeError) in try FieldDecoder.decode(params, &r, into: &f) })
    }

    init(_ code: L2CAP.SignalingCode, _ name: StaticString, response: L2CAP.SignalingCode? = nil, size: PDUSize,
         decode: @escaping Decode, display: @escaping Display) {
        (self.code, self.name, self.response, self.size, self.decode, self.display) = (code, name, response, size, decode, display)
    }
}

/// The signalling table, Core v5.4 Vol 3 Part A 4 (Table 4.2), one row per command in code order.
/// LE carries Command Reject, Disconnection, Connection Parameter Update, the credit-based
/// commands and Flow Control Credit Indication; the rest are BR/EDR.
public enum L2CAPSignalingTable {
    typealias Entry = L2CAPSignalingEntry
    private static let cid = FieldSpec.hex(2)

    static let rows: [Entry] = [
        Entry(.commandReject, "Command Reject", size: .atLeast(2), decode: { r throws(DecodeError) in
            .commandReject(reason: try r.u16le("Reason"), data: r.takeRest())
        }, display: { r, f throws(DecodeError) in
            let reason = try r.u16le("Reason")
            f.append(Field(.reason, "Reason", .integer(UInt64(reason), .named(bytes: 2, rejectReasons))))
            switch reason {
            case 0x0001: f.append(Field("Actual MTU", .integer(UInt64(try r.u16le("Actual MTU")), .decimal(bytes: 2))))
            case 0x0002:
                f.append(Field("Local CID", .integer(UInt64(try r.u16le("Local CID")), .hex(bytes: 2))))
                f.append(Field("Remote CID", .integer(UInt64(try r.u16le("Remote CID")), .hex(bytes: 2))))
            default: break
            }
        }),
        Entry(.connectionRequest, "Connection Request", response: .connectionResponse, size: .exactly(4),
              [Param("PSM", .hex(2)), Param("Source CID", cid)]) { r throws(DecodeError) in
            .connectionRequest(psm: try r.u16le("PSM"), sourceCID: try r.u16le("Source CID"))
        },
        Entry(.connectionResponse, "Connection Response", size: .exactly(8),
              [Param("Destination CID", cid), Param("Source CID", cid), Param("Result", .named(2, connectionResults)),
               Param("Status", .named(2, connectionStatus))]) { r throws(DecodeError) in
            .connectionResponse(destinationCID: try r.u16le("Destination CID"), sourceCID: try r.u16le("Source CID"),
                                result: try r.u16le("Result"), status: try r.u16le("Status"))
        },
        Entry(.configurationRequest, "Configuration Request", response: .configurationResponse, size: .atLeast(4),
              [Param("Destination CID", cid), Param("Flags", .hex(2)), Param("Options", .rest)]) { r throws(DecodeError) in
            .configurationRequest(destinationCID: try r.u16le("Destination CID"), flags: try r.u16le("Flags"), options: r.takeRest())
        },
        Entry(.configurationResponse, "Configuration Response", size: .atLeast(6),
              [Param("Source CID", cid), Param("Flags", .hex(2)), Param("Result", .named(2, configurationResults)),
               Param("Options", .rest)]) { r throws(DecodeError) in
            .configurationResponse(sourceCID: try r.u16le("Source CID"), flags: try r.u16le("Flags"),
                                   result: try r.u16le("Result"), options: r.takeRest())
        },
        Entry(.disconnectionRequest, "Disconnection Request", response: .disconnectionResponse, size: .exactly(4),
              [Param("Destination CID", cid), Param("Source CID", cid)]) { r throws(DecodeError) in
            .disconnectionRequest(destinationCID: try r.u16le("Destination CID"), sourceCID: try r.u16le("Source CID"))
        },
        Entry(.disconnectionResponse, "Disconnection Response", size: .exactly(4),
              [Param("Destination CID", cid), Param("Source CID", cid)]) { r throws(DecodeError) in
            .disconnectionResponse(destinationCID: try r.u16le("Destination CID"), sourceCID: try r.u16le("Source CID"))
        },
        Entry(.echoRequest, "Echo Request", response: .echoResponse, size: .atLeast(0), [Param("Data", .rest)]) { r throws(DecodeError) in
            .echoRequest(data: r.takeRest())
        },
        Entry(.echoResponse, "Echo Response", size: .atLeast(0), [Param("Data", .rest)]) { r throws(DecodeError) in
            .echoResponse(data: r.takeRest())
        },
        Entry(.informationRequest, "Information Request", response: .informationResponse, size: .exactly(2),
              [Param("Type", .named(2, informationTypes))]) { r throws(DecodeError) in
            .informationRequest(infoType: try r.u16le("InfoType"))
        },
        Entry(.informationResponse, "Information Response", size: .atLeast(4),
              [Param("Type", .named(2, informationTypes)), Param("Result", .named(2, informationResults)),
               Param("Data", .rest)]) { r throws(DecodeError) in
            .informationResponse(infoType: try r.u16le("InfoType"), result: try r.u16le("Result"), data: r.takeRest())
        },
        Entry(.createChannelRequest, "Create Channel Request", response: .createChannelResponse, size: .exactly(5),
              [Param("PSM", .hex(2)), Param("Source CID", cid), Param("Controller ID", .uint(1))], decode: amp(.createChannelRequest)),
        Entry(.createChannelResponse, "Create Channel Response", size: .exactly(8),
              [Param("Destination CID", cid), Param("Source CID", cid), Param("Result", .hex(2)), Param("Status", .hex(2))],
              decode: amp(.createChannelResponse)),
        Entry(.moveChannelRequest, "Move Channel Request", response: .moveChannelResponse, size: .exactly(3),
              [Param("Initiator CID", cid), Param("Dest Controller ID", .uint(1))], decode: amp(.moveChannelRequest)),
        Entry(.moveChannelResponse, "Move Channel Response", size: .exactly(4),
              [Param("Initiator CID", cid), Param("Result", .hex(2))], decode: amp(.moveChannelResponse)),
        Entry(.moveChannelConfirmationRequest, "Move Channel Confirmation Request", response: .moveChannelConfirmationResponse,
              size: .exactly(4), [Param("Initiator CID", cid), Param("Result", .hex(2))], decode: amp(.moveChannelConfirmationRequest)),
        Entry(.moveChannelConfirmationResponse, "Move Channel Confirmation Response", size: .exactly(2),
              [Param("Initiator CID", cid)], decode: amp(.moveChannelConfirmationResponse)),
        Entry(.connectionParameterUpdateRequest, "Connection Parameter Update Request",
              response: .connectionParameterUpdateResponse, size: .exactly(8),
              [Param("Min Interval", .scaled(2, factor: 1.25, unit: "msec")), Param("Max Interval", .scaled(2, factor: 1.25, unit: "msec")),
               Param("Peripheral Latency", .uint(2)), Param("Timeout Multiplier", .scaled(2, factor: 10, unit: "msec"))]) { r throws(DecodeError) in
            .connectionParameterUpdateRequest(L2CAP.ConnectionParameterUpdateRequest(
                intervalMinUnits: try r.u16le("Interval Min"), intervalMaxUnits: try r.u16le("Interval Max"),
                latency: try r.u16le("Peripheral Latency"), timeoutUnits: try r.u16le("Timeout Multiplier")))
        },
        Entry(.connectionParameterUpdateResponse, "Connection Parameter Update Response", size: .exactly(2),
              [Param("Result", .named(2, parameterUpdateResults))]) { r throws(DecodeError) in
            .connectionParameterUpdateResponse(result: try r.u16le("Result"))
        },
        Entry(.leCreditBasedConnectionRequest, "LE Credit Based Connection Request",
              response: .leCreditBasedConnectionResponse, size: .exactly(10),
              [Param("SPSM", .hex(2)), Param("Source CID", cid), Param("MTU", .uint(2)), Param("MPS", .uint(2)),
               Param("Initial Credits", .uint(2))]) { r throws(DecodeError) in
            .leCreditBasedConnectionRequest(L2CAP.LECreditBasedConnectionRequest(
                spsm: try r.u16le("SPSM"), sourceCID: try r.u16le("Source CID"), mtu: try r.u16le("MTU"),
                mps: try r.u16le("MPS"), initialCredits: try r.u16le("Initial Credits")))
        },
        Entry(.leCreditBasedConnectionResponse, "LE Credit Based Connection Response", size: .exactly(10),
              [Param("Destination CID", cid), Param("MTU", .uint(2)), Param("MPS", .uint(2)), Param("Initial Credits", .uint(2)),
               Param("Result", .named(2, leCreditResults))]) { r throws(DecodeError) in
            .leCreditBasedConnectionResponse(L2CAP.LECreditBasedConnectionResponse(
                destinationCID: try r.u16le("Destination CID"), mtu: try r.u16le("MTU"), mps: try r.u16le("MPS"),
                initialCredits: try r.u16le("Initial Credits"), result: try r.u16le("Result")))
        },
        Entry(.flowControlCreditIndication, "Flow Control Credit Indication", size: .exactly(4),
              [Param("CID", cid), Param("Credits", .uint(2))]) { r throws(DecodeError) in
            .flowControlCreditIndication(cid: try r.u16le("CID"), credits: try r.u16le("Credits"))
        },
        Entry(.creditBasedConnectionRequest, "Credit Based Connection Request", response: .creditBasedConnectionResponse,
              size: .atLeast(10),
              [Param("SPSM", .hex(2)), Param("MTU", .uint(2)), Param("MPS", .uint(2)), Param("Initial Credits", .uint(2)),
               Param("Source CID", .custom(cids))]) { r throws(DecodeError) in
            .creditBasedConnectionRequest(L2CAP.CreditBasedConnectionRequest(
                spsm: try r.u16le("SPSM"), mtu: try r.u16le("MTU"), mps: try r.u16le("MPS"),
                initialCredits: try r.u16le("Initial Credits"), sourceCIDs: try cidList(&r, "Source CID")))
        },
        Entry(.creditBasedConnectionResponse, "Credit Based Connection Response", size: .atLeast(8),
              [Param("MTU", .uint(2)), Param("MPS", .uint(2)), Param("Initial Credits", .uint(2)),
               Param("Result", .named(2, creditBasedResults)),
               Param("Destination CID", .custom(cids))]) { r throws(DecodeError) in
            .creditBasedConnectionResponse(L2CAP.CreditBasedConnectionResponse(
                mtu: try r.u16le("MTU"), mps: try r.u16le("MPS"), initialCredits: try r.u16le("Initial Credits"),
                result: try r.u16le("Result"), destinationCIDs: try cidList(&r, "Destination CID")))
        },
        Entry(.creditBasedReconfigureRequest, "Credit Based Reconfigure Request", response: .creditBasedReconfigureResponse,
              size: .atLeast(6),
              [Param("MTU", .uint(2)), Param("MPS", .uint(2)),
               Param("Destination CID", .custom(cids))]) { r throws(DecodeError) in
            .creditBasedReconfigureRequest(mtu: try r.u16le("MTU"), mps: try r.u16le("MPS"),
                                           destinationCIDs: try cidList(&r, "Destination CID"))
        },
        Entry(.creditBasedReconfigureResponse, "Credit Based Reconfigure Response", size: .exactly(2),
              [Param("Result", .named(2, reconfigureResults))]) { r throws(DecodeError) in
            .creditBasedReconfigureResponse(result: try r.u16le("Result"))
        },
    ]

    static let index = ByteCodeIndex(rows) { $0.code.rawValue }

    /// Every code the table knows, in order.
    public static var knownCodes: [L2CAP.SignalingCode] { rows.map(\.code) }
    /// Codes with more than one row (should be empty; checked by a test).
    public static var duplicateCodes: [UInt8] { index.duplicateCodes }

    /// A CID list for display: the CIDs comma-separated in hex (`0x0040, 0x0041`).
    /// - Throws: `.lengthMismatch` for an odd number of bytes, as `cidList` does.
    @Sendable static func cids(_ r: inout ByteReader) throws(DecodeError) -> FieldValue {
        let list = try cidList(&r, "CID")
        return .text(list.map { Hex.code($0, 4) }.joined(separator: ", "))
    }

    static func amp(_ code: L2CAP.SignalingCode) -> Entry.Decode {
        { r throws(DecodeError) in .amp(code, payload: r.takeRest()) }
    }

    /// The rest as a list of CIDs (2 bytes each). More than 5 is kept (the peer must reject it).
    /// - Throws: `.lengthMismatch` for an odd number of bytes.
    static func cidList(_ r: inout ByteReader, _ field: StaticString) throws(DecodeError) -> [UInt16] {
        guard r.remaining % 2 == 0 else {   // safe: constant divisor
            throw DecodeError(kind: .lengthMismatch(declared: 2, actual: r.remaining), offset: r.absoluteOffset, field: field)
        }
        var cids: [UInt16] = []
        cids.reserveCapacity(r.remaining / 2)   // safe: constant divisor
        while !r.isAtEnd { cids.append(try r.u16le(field)) }
        return cids
    }

    public static let rejectReasons = NameTable([
        (0x0000, "Command not understood"), (0x0001, "Signaling MTU exceeded"), (0x0002, "Invalid CID in request"),
    ])
    public static let connectionResults = NameTable([
        (0x0000, "Connection successful"), (0x0001, "Connection pending"), (0x0002, "Connection refused - PSM not supported"),
        (0x0003, "Connection refused - security block"), (0x0004, "Connection refused - no resources available"),
        (0x0006, "Connection refused - invalid Source CID"), (0x0007, "Connection refused - Source CID already allocated"),
    ])
    public static let connectionStatus = NameTable([
        (0x0000, "No further information available"), (0x0001, "Authentication pending"), (0x0002, "Authorization pending"),
    ])
    public static let configurationResults = NameTable([
        (0x0000, "Success"), (0x0001, "Failure - unacceptable parameters"), (0x0002, "Failure - rejected"),
        (0x0003, "Failure - unknown options"), (0x0004, "Pending"), (0x0005, "Failure - flow spec rejected"),
    ])
    public static let informationTypes = NameTable([
        (0x0001, "Connectionless MTU"), (0x0002, "Extended features supported"), (0x0003, "Fixed channels supported"),
    ])
    public static let informationResults = NameTable([(0x0000, "Success"), (0x0001, "Not supported")])
    public static let parameterUpdateResults = NameTable([
        (0x0000, "Connection Parameters accepted"), (0x0001, "Connection Parameters rejected"),
    ])
    /// LE Credit Based Connection Response results, 4.23.
    public static let leCreditResults = NameTable([
        (0x0000, "Connection successful"), (0x0002, "Connection refused - SPSM not supported"),
        (0x0004, "Connection refused - no resources available"), (0x0005, "Connection refused - insufficient authentication"),
        (0x0006, "Connection refused - insufficient authorization"), (0x0007, "Connection refused - encryption key size too short"),
        (0x0008, "Connection refused - insufficient encryption"), (0x0009, "Connection refused - invalid Source CID"),
        (0x000A, "Connection refused - Source CID already allocated"), (0x000B, "Connection refused - unacceptable parameters"),
    ])
    /// Credit Based Connection Response results, 4.26.
    public static let creditBasedResults = NameTable([
        (0x0000, "All connections successful"), (0x0002, "All connections refused - SPSM not supported"),
        (0x0004, "Some connections refused - insufficient resources available"),
        (0x0005, "All connections refused - insufficient authentication"),
        (0x0006, "All connections refused - insufficient authorization"),
        (0x0007, "All connections refused - encryption key size too short"),
        (0x0008, "All connections refused - insufficient encryption"),
        (0x0009, "Some connections refused - invalid Source CID"),
        (0x000A, "Some connections refused - Source CID already allocated"),
        (0x000B, "All connections refused - unacceptable parameters"),
        (0x000C, "All connections refused - invalid parameters"),
        (0x000D, "All connections pending - no further information available"),
        (0x000E, "All connections pending - authentication pending"),
        (0x000F, "All connections pending - authorization pending"),
    ])
    /// Credit Based Reconfigure Response results, 4.28.
    public static let reconfigureResults = NameTable([
        (0x0000, "Reconfiguration successful"), (0x0001, "Reconfiguration failed - reduction in size of MTU not allowed"),
        (0x0002, "Reconfiguration failed - reduction in size of MPS not allowed for more than one channel at a time"),
        (0x0003, "Reconfiguration failed - one or more Destination CIDs invalid"),
        (0x0004, "Reconfiguration failed - other unacceptable parameters"),
    ])
}
