import BLEBytes

/// Write PDUs, Core v5.4 Vol 3 Part F 3.4.5 (Write Request/Response, Write Command, Signed Write
/// Command) and 3.4.6 (Prepare Write, Execute Write).
extension ATTDecoding {
    static let write: [ATTParam] = [
        ATTParam("Handle", spec: "Attribute Handle", .handle, key: K.attributeHandle),
        ATTParam("Value", spec: "Attribute Value", .value(.handle), key: K.attributeValue),
    ]
    /// Prepare Write Request/Response: handle, offset, part value (not decoded: a fragment).
    static let prepareWrite: [ATTParam] = [
        ATTParam("Handle", spec: "Attribute Handle", .handle, key: K.attributeHandle),
        ATTParam("Offset", spec: "Value Offset", .uint(2), key: K.valueOffset),
        ATTParam("Part Value", spec: "Part Attribute Value", .value(.none), key: K.partAttributeValue),
    ]
    static let executeWriteRequest: [ATTParam] = [ATTParam("Flags", spec: "Flags", .named(1, executeWriteFlagNames), key: K.flags)]
    /// The Authentication Signature (12 bytes, `ATT.signatureLength`) follows the value.
    static let signedWrite: [ATTParam] = [
        ATTParam("Handle", spec: "Attribute Handle", .handle, key: K.attributeHandle),
        ATTParam("Value", spec: "Attribute Value", .value(.handle), key: K.attributeValue),
        ATTParam("Sign Counter", spec: "Sign Counter", .uint(4), key: K.signCounter),
        ATTParam("MAC", spec: "MAC", .bytes(8), key: K.mac),
    ]

    static let writeRows: [ATTEntry] = [
        ATTEntry(.writeRequest, "Write Request", .request, response: .writeResponse, write) { r throws(DecodeError) in
            .writeRequest(handle: try L.writeHandle.u16(r), value: try L.writeValue.range(r))
        },
        ATTEntry(.writeResponse, "Write Response", .response, []) { _ throws(DecodeError) in .writeResponse },
        ATTEntry(.prepareWriteRequest, "Prepare Write Request", .request, response: .prepareWriteResponse, prepareWrite) { r throws(DecodeError) in
            .prepareWriteRequest(handle: try L.prepareHandle.u16(r), offset: try L.prepareOffset.u16(r), value: try L.prepareValue.range(r))
        },
        ATTEntry(.prepareWriteResponse, "Prepare Write Response", .response, prepareWrite) { r throws(DecodeError) in
            .prepareWriteResponse(handle: try L.prepareHandle.u16(r), offset: try L.prepareOffset.u16(r), value: try L.prepareValue.range(r))
        },
        ATTEntry(.executeWriteRequest, "Execute Write Request", .request, response: .executeWriteResponse, executeWriteRequest) { r throws(DecodeError) in
            .executeWriteRequest(flags: ATT.ExecuteWriteFlags(rawValue: try L.executeFlags.u8(r)))
        },
        ATTEntry(.executeWriteResponse, "Execute Write Response", .response, []) { _ throws(DecodeError) in .executeWriteResponse },
        ATTEntry(.writeCommand, "Write Command", .command, write) { r throws(DecodeError) in
            .writeCommand(handle: try L.writeHandle.u16(r), value: try L.writeValue.range(r))
        },
        ATTEntry(.signedWriteCommand, "Signed Write Command", .command, signedWrite) { r throws(DecodeError) in
            .signedWriteCommand(handle: try L.signedHandle.u16(r), value: try L.signedValue.range(r, tail: ATT.signatureLength),
                                signature: try L.signCounter.toEnd(r))
        },
    ]

    static let executeWriteFlagNames = NameTable([
        (0x00, "Cancel all prepared writes"), (0x01, "Immediately write all pending prepared values"),
    ])
}
