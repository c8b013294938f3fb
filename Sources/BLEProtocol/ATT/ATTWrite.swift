import BLEBytes

/// Write PDUs, Core v5.4 Vol 3 Part F 3.4.5 (Write Request/Response, Write Command, Signed Write
/// Command) and 3.4.6 (Prepare Write, Execute Write).
extension ATTDecoding {
    static let writeRows: [ATTEntry] = [
        ATTEntry(.writeRequest, "Write Request", .request, response: .writeResponse, size: .atLeast(2),
                 decode: { r throws(DecodeError) in
                     .writeRequest(handle: try r.u16le("Attribute Handle"), value: r.takeRest())
                 },
                 display: { r, ctx, f throws(DecodeError) in
                     let h = try ATTShow.handle(&r, ctx, &f)
                     ATTShow.restValue(&r, handle: h, ctx, &f)
                 }),
        ATTEntry(.writeResponse, "Write Response", .response, size: .exactly(0),
                 decode: { _ throws(DecodeError) in .writeResponse },
                 display: { _, _, _ throws(DecodeError) in }),
        ATTEntry(.prepareWriteRequest, "Prepare Write Request", .request, response: .prepareWriteResponse, size: .atLeast(4),
                 decode: { r throws(DecodeError) in
                     .prepareWriteRequest(handle: try r.u16le("Attribute Handle"), offset: try r.u16le("Value Offset"), value: r.takeRest())
                 },
                 display: showPrepareWrite),
        ATTEntry(.prepareWriteResponse, "Prepare Write Response", .response, size: .atLeast(4),
                 decode: { r throws(DecodeError) in
                     .prepareWriteResponse(handle: try r.u16le("Attribute Handle"), offset: try r.u16le("Value Offset"), value: r.takeRest())
                 },
                 display: showPrepareWrite),
        ATTEntry(.executeWriteRequest, "Execute Write Request", .request, response: .executeWriteResponse, size: .exactly(1),
                 decode: { r throws(DecodeError) in .executeWriteRequest(flags: ATT.ExecuteWriteFlags(rawValue: try r.u8("Flags"))) },
                 display: ATTShow.params([Param("Flags", .named(1, executeWriteFlagNames))])),
        ATTEntry(.executeWriteResponse, "Execute Write Response", .response, size: .exactly(0),
                 decode: { _ throws(DecodeError) in .executeWriteResponse },
                 display: { _, _, _ throws(DecodeError) in }),
        ATTEntry(.writeCommand, "Write Command", .command, size: .atLeast(2),
                 decode: { r throws(DecodeError) in
                     .writeCommand(handle: try r.u16le("Attribute Handle"), value: r.takeRest())
                 },
                 display: { r, ctx, f throws(DecodeError) in
                     let h = try ATTShow.handle(&r, ctx, &f)
                     ATTShow.restValue(&r, handle: h, ctx, &f)
                 }),
        ATTEntry(.signedWriteCommand, "Signed Write Command", .command, size: .atLeast(2 + ATT.signatureLength),
                 decode: { r throws(DecodeError) in
                     let handle = try r.u16le("Attribute Handle")
                     // safe: the size rule guarantees at least 12 bytes after the handle
                     let value = try r.takeRange(r.remaining &- ATT.signatureLength, "Attribute Value")
                     return .signedWriteCommand(handle: handle, value: value,
                                                signature: try r.takeRange(ATT.signatureLength, "Authentication Signature"))
                 },
                 display: { r, ctx, f throws(DecodeError) in
                     let h = try ATTShow.handle(&r, ctx, &f)
                     // safe: the size rule guarantees at least 12 bytes after the handle
                     let value = try r.slice(r.remaining &- ATT.signatureLength, "Attribute Value")
                     ATTShow.value(value, uuid: ctx.valueUUID(h), &f)
                     f.append(Field("Sign Counter", .integer(UInt64(try r.u32le("Sign Counter")), .decimal(bytes: 4))))
                     f.append(Field("MAC", .bytes(try r.copy(8, "MAC"))))
                 }),
    ]

    static let executeWriteFlagNames = NameTable([
        (0x00, "Cancel all prepared writes"), (0x01, "Immediately write all pending prepared values"),
    ])

    /// Prepare Write Request/Response: handle, offset, part value (not decoded: a fragment).
    static let showPrepareWrite: ATTEntry.Display = { r, ctx, f throws(DecodeError) in
        try ATTShow.handle(&r, ctx, &f)
        f.append(Field("Offset", .integer(UInt64(try r.u16le("Value Offset")), .decimal(bytes: 2))))
        ATTShow.value(r.rest(), uuid: nil, &f, "Part Value")
    }
}
