import BLEBytes

/// Discovery PDUs, Core v5.4 Vol 3 Part F 3.4.3 (Find Information, Find By Type Value) and
/// 3.4.4.1–2 / 3.4.4.9–10 (Read By Type, Read By Group Type).
extension ATTDecoding {
    static let handleRange: [ATTParam] = [
        ATTParam("Start Handle", spec: "Starting Handle", .hex16, key: K.startingHandle),
        ATTParam("End Handle", spec: "Ending Handle", .hex16, key: K.endingHandle),
    ]
    static let findInformationResponse: [ATTParam] = [
        ATTParam("Format", spec: "Format", .named(1, formatNames), key: K.format),
        ATTParam("Information Data", spec: "Information Data", .list(.informationData), key: K.informationData),
    ]
    static let findByTypeValueRequest: [ATTParam] = handleRange + [
        ATTParam("Attribute Type", spec: "Attribute Type", .uuid16, key: K.attributeType),
        ATTParam("Attribute Value", spec: "Attribute Value", .value(.type), key: K.attributeValue),
    ]
    static let findByTypeValueResponse: [ATTParam] = [
        ATTParam("Handles Information", spec: "Handles Information List", .list(.handlesInformation), key: K.handlesInformationList),
    ]
    static let readByTypeRequest: [ATTParam] = handleRange + [ATTParam("Attribute Type", spec: "Attribute Type", .uuidRest, key: K.attributeType)]
    static let readByTypeResponse: [ATTParam] = [
        ATTParam("Length", spec: "Length", .uint(1), key: K.length),
        ATTParam("Attribute Data", spec: "Attribute Data List", .list(.attributeData), key: K.attributeDataList),
    ]
    static let readByGroupTypeRequest: [ATTParam] = handleRange + [
        ATTParam("Attribute Group Type", spec: "Attribute Group Type", .uuidRest, key: K.attributeGroupType),
    ]
    static let readByGroupTypeResponse: [ATTParam] = [
        ATTParam("Length", spec: "Length", .uint(1), key: K.length),
        ATTParam("Attribute Data", spec: "Attribute Data List", .list(.groupData), key: K.attributeDataList),
    ]

    static let discoveryRows: [ATTEntry] = [
        ATTEntry(.findInformationRequest, "Find Information Request", .request, response: .findInformationResponse, handleRange) { r throws(DecodeError) in
            .findInformationRequest(range: try L.handleRange(r))
        },
        ATTEntry(.findInformationResponse, "Find Information Response", .response, findInformationResponse) { r throws(DecodeError) in
            .findInformationResponse(try findInformation(&r))
        },
        ATTEntry(.findByTypeValueRequest, "Find By Type Value Request", .request, response: .findByTypeValueResponse,
                 findByTypeValueRequest) { r throws(DecodeError) in
            var type = try L.findByTypeValueType.reader(r)
            return .findByTypeValueRequest(ATT.FindByTypeValueRequest(
                range: try L.handleRange(r), type: try type.uuid(width: 2, "Attribute Type"), value: try L.findByTypeValueValue.range(r)))
        },
        ATTEntry(.findByTypeValueResponse, "Find By Type Value Response", .response, findByTypeValueResponse) { r throws(DecodeError) in
            try evenList(r, element: 4, "Handles Information List")
            var handles: [ATT.HandleRange] = []
            handles.reserveCapacity(r.remaining / 4)   // safe: constant divisor
            while !r.isAtEnd {
                handles.append(ATT.HandleRange(start: try r.u16le("Found Attribute Handle"), end: try r.u16le("Group End Handle")))
            }
            return .findByTypeValueResponse(handles: handles)
        },
        ATTEntry(.readByTypeRequest, "Read By Type Request", .request, response: .readByTypeResponse, readByTypeRequest) { r throws(DecodeError) in
            var type = try L.readByTypeType.reader(r)
            return .readByTypeRequest(range: try L.handleRange(r), type: try restUUID(&type, "Attribute Type"))
        },
        ATTEntry(.readByTypeResponse, "Read By Type Response", .response, readByTypeResponse) { r throws(DecodeError) in
            let length = try listLength(&r, minimum: 2, "Length")
            var elements: [ATT.HandleValue] = []
            elements.reserveCapacity(r.remaining / Int(length))   // safe: listLength guarantees length >= 2
            while !r.isAtEnd {
                elements.append(ATT.HandleValue(handle: try r.u16le("Attribute Handle"),
                                                value: try r.takeRange(Int(length) &- 2, "Attribute Value")))   // safe: length >= 2
            }
            return .readByTypeResponse(ATT.ReadByTypeResponse(length: length, elements: elements))
        },
        ATTEntry(.readByGroupTypeRequest, "Read By Group Type Request", .request, response: .readByGroupTypeResponse,
                 readByGroupTypeRequest) { r throws(DecodeError) in
            var type = try L.readByGroupTypeType.reader(r)
            return .readByGroupTypeRequest(range: try L.handleRange(r), type: try restUUID(&type, "Attribute Group Type"))
        },
        ATTEntry(.readByGroupTypeResponse, "Read By Group Type Response", .response, readByGroupTypeResponse) { r throws(DecodeError) in
            let length = try listLength(&r, minimum: 4, "Length")
            var elements: [ATT.GroupValue] = []
            elements.reserveCapacity(r.remaining / Int(length))   // safe: listLength guarantees length >= 4
            while !r.isAtEnd {
                elements.append(ATT.GroupValue(handle: try r.u16le("Attribute Handle"),
                                               endGroupHandle: try r.u16le("End Group Handle"),
                                               value: try r.takeRange(Int(length) &- 4, "Attribute Value")))   // safe: length >= 4
            }
            return .readByGroupTypeResponse(ATT.ReadByGroupTypeResponse(length: length, elements: elements))
        },
    ]

    static let formatNames = NameTable([(1, "UUID-16"), (2, "UUID-128")])

    /// Find Information Response: Format, then (handle, UUID) pairs.
    static func findInformation(_ r: inout ByteReader) throws(DecodeError) -> ATT.FindInformationResponse {
        let format = try r.u8("Format")
        let width = try uuidWidth(format: format, &r)
        try evenList(r, element: 2 + width, "Information Data")
        var entries: [ATT.HandleUUID] = []
        entries.reserveCapacity(r.remaining / (2 + width))   // safe: width is 2 or 16
        while !r.isAtEnd {
            entries.append(ATT.HandleUUID(handle: try r.u16le("Handle"), uuid: try r.uuid(width: width)))
        }
        return ATT.FindInformationResponse(format: format, entries: entries)
    }

    /// Format 0x01 → 2-byte UUIDs, 0x02 → 16-byte UUIDs (3.4.3.2).
    /// - Throws: `.invalidValue(format)` at the Format byte for anything else.
    static func uuidWidth(format: UInt8, _ r: inout ByteReader) throws(DecodeError) -> Int {
        switch format {
        case 1: return 2
        case 2: return 16
        default: throw DecodeError(kind: .invalidValue(UInt64(format)), offset: r.absoluteOffset &- 1, field: "Format")   // safe: Format was just read
        }
    }

    /// Reads the per-element Length of a Read By Type / Read By Group Type Response and checks the
    /// list against it: at least `minimum` (so never zero — the PureSwift division-by-zero crash), a
    /// non-empty list, a whole number of elements.
    /// - Throws: `.invalidValue(length)` at the Length byte; `.lengthMismatch` for a bad list.
    static func listLength(_ r: inout ByteReader, minimum: UInt8, _ field: StaticString) throws(DecodeError) -> UInt8 {
        let offset = r.absoluteOffset
        let length = try r.u8(field)
        try checkList(r, length: length, at: offset, minimum: minimum, field)
        return length
    }

    /// The checks of `listLength` for a Length already read at `offset`.
    static func checkList(_ r: ByteReader, length: UInt8, at offset: Int, minimum: UInt8, _ field: StaticString) throws(DecodeError) {
        guard length >= minimum else {
            throw DecodeError(kind: .invalidValue(UInt64(length)), offset: offset, field: field)
        }
        guard r.remaining > 0 else {
            throw DecodeError(kind: .lengthMismatch(declared: Int(length), actual: 0), offset: r.absoluteOffset, field: "Attribute Data List")
        }
        try evenList(r, element: Int(length), "Attribute Data List")
    }

    /// Characteristic discovery without a paired request: a 5- or 19-byte value whose Characteristic
    /// Value Handle is the next handle is a characteristic declaration (Core v5.4 Vol 3 Part G 3.3.1).
    static func guessDeclaration(handle: UInt16, _ value: ByteReader) -> BluetoothUUID? {
        guard value.remaining == 5 || value.remaining == 19,
              let lo = value.peekU8(at: 1), let hi = value.peekU8(at: 2),
              UInt16(hi) << 8 | UInt16(lo) == handle &+ 1 else { return nil }   // safe: wrapping compare
        return .characteristic
    }
}
