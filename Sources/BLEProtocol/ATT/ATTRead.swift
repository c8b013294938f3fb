import BLEBytes

/// Read PDUs, Core v5.4 Vol 3 Part F 3.4.4.3–3.4.4.8 and 3.4.4.11–12: Read, Read Blob, Read
/// Multiple, Read Multiple Variable.
extension ATTDecoding {
    static let readRequest: [ATTParam] = [ATTParam("Handle", spec: "Attribute Handle", .handle, key: K.attributeHandle)]
    static let readResponse: [ATTParam] = [ATTParam("Value", spec: "Attribute Value", .value(.request), key: K.attributeValue)]
    static let readBlobRequest: [ATTParam] = [
        ATTParam("Handle", spec: "Attribute Handle", .handle, key: K.attributeHandle),
        ATTParam("Offset", spec: "Value Offset", .uint(2), key: K.valueOffset),
    ]
    /// A part of a long value: not decoded on its own.
    static let readBlobResponse: [ATTParam] = [ATTParam("Part Value", spec: "Part Attribute Value", .value(.requestPart), key: K.partAttributeValue)]
    static let setOfHandles: [ATTParam] = [ATTParam("Handle", spec: "Set Of Handles", .list(.handleSet), key: K.setOfHandles)]
    static let readMultipleResponse: [ATTParam] = [ATTParam("Set Of Values", spec: "Set Of Values", .value(.none), key: K.setOfValues)]
    static let readMultipleVariableResponse: [ATTParam] = [
        ATTParam("Length Value Tuple List", spec: "Length Value Tuple List", .list(.lengthValueTuples), key: K.lengthValueTupleList),
    ]

    static let readRows: [ATTEntry] = [
        ATTEntry(.readRequest, "Read Request", .request, response: .readResponse, readRequest) { r throws(DecodeError) in
            .readRequest(handle: try L.readHandle.u16(r))
        },
        ATTEntry(.readResponse, "Read Response", .response, readResponse) { r throws(DecodeError) in
            .readResponse(value: try L.readValue.range(r))
        },
        ATTEntry(.readBlobRequest, "Read Blob Request", .request, response: .readBlobResponse, readBlobRequest) { r throws(DecodeError) in
            .readBlobRequest(handle: try L.readBlobHandle.u16(r), offset: try L.readBlobOffset.u16(r))
        },
        ATTEntry(.readBlobResponse, "Read Blob Response", .response, readBlobResponse) { r throws(DecodeError) in
            .readBlobResponse(value: try L.readBlobValue.range(r))
        },
        ATTEntry(.readMultipleRequest, "Read Multiple Request", .request, response: .readMultipleResponse, setOfHandles) { r throws(DecodeError) in
            .readMultipleRequest(handles: try handleSet(&r))
        },
        ATTEntry(.readMultipleResponse, "Read Multiple Response", .response, readMultipleResponse) { r throws(DecodeError) in
            .readMultipleResponse(values: try L.readMultipleValues.range(r))
        },
        ATTEntry(.readMultipleVariableRequest, "Read Multiple Variable Request", .request,
                 response: .readMultipleVariableResponse, setOfHandles) { r throws(DecodeError) in
            .readMultipleVariableRequest(handles: try handleSet(&r))
        },
        ATTEntry(.readMultipleVariableResponse, "Read Multiple Variable Response", .response,
                 readMultipleVariableResponse) { r throws(DecodeError) in
            .readMultipleVariableResponse(try readMultipleVariable(&r))
        },
    ]

    /// Length Value Tuple List, 3.4.4.12. The last tuple may be cut short at ATT_MTU − 1, even inside
    /// its Value Length: that is allowed, not malformed (`isTruncated`).
    static func readMultipleVariable(_ r: inout ByteReader) throws(DecodeError) -> ATT.ReadMultipleVariableResponse {
        var values: [ATT.LengthValue] = []
        while r.remaining >= 2 {
            let length = try r.u16le("Value Length")
            values.append(ATT.LengthValue(length: length, value: try r.takeRange(min(Int(length), r.remaining), "Attribute Value")))
        }
        let cutInLength = r.remaining > 0
        _ = r.rest()
        return ATT.ReadMultipleVariableResponse(values: values, cutInLength: cutInLength)
    }
}
