import BLEBytes

/// Read PDUs, Core v5.4 Vol 3 Part F 3.4.4.3–3.4.4.8 and 3.4.4.11–12: Read, Read Blob, Read
/// Multiple, Read Multiple Variable.
extension ATTDecoding {
    static let readRows: [ATTEntry] = [
        ATTEntry(.readRequest, "Read Request", .request, response: .readResponse, size: .exactly(2),
                 decode: { r throws(DecodeError) in .readRequest(handle: try r.u16le("Attribute Handle")) },
                 display: { r, ctx, f throws(DecodeError) in try ATTShow.handle(&r, ctx, &f) }),
        ATTEntry(.readResponse, "Read Response", .response, size: .atLeast(0),
                 decode: { r throws(DecodeError) in .readResponse(value: r.takeRest()) },
                 display: { r, ctx, f throws(DecodeError) in
                     if let h = ctx.requestHandle, let d = ctx.attribute(h) { f.append(Field("Attribute", .text(d))) }
                     ATTShow.restValue(&r, handle: ctx.requestHandle, ctx, &f)
                 }),
        ATTEntry(.readBlobRequest, "Read Blob Request", .request, response: .readBlobResponse, size: .exactly(4),
                 decode: { r throws(DecodeError) in
                     .readBlobRequest(handle: try r.u16le("Attribute Handle"), offset: try r.u16le("Value Offset"))
                 },
                 display: { r, ctx, f throws(DecodeError) in
                     try ATTShow.handle(&r, ctx, &f)
                     f.append(Field("Offset", .integer(UInt64(try r.u16le("Value Offset")), .decimal(bytes: 2))))
                 }),
        ATTEntry(.readBlobResponse, "Read Blob Response", .response, size: .atLeast(0),
                 decode: { r throws(DecodeError) in .readBlobResponse(value: r.takeRest()) },
                 display: { r, ctx, f throws(DecodeError) in
                     if let h = ctx.requestHandle, let d = ctx.attribute(h) { f.append(Field("Attribute", .text(d))) }
                     // A part of a long value: not decoded on its own.
                     ATTShow.value(r.rest(), uuid: nil, &f, "Part Value")
                 }),
        ATTEntry(.readMultipleRequest, "Read Multiple Request", .request, response: .readMultipleResponse, size: .atLeast(4),
                 decode: { r throws(DecodeError) in .readMultipleRequest(handles: try handleSet(&r)) },
                 display: { r, ctx, f throws(DecodeError) in try showHandleSet(&r, ctx, &f) }),
        ATTEntry(.readMultipleResponse, "Read Multiple Response", .response, size: .atLeast(0),
                 decode: { r throws(DecodeError) in .readMultipleResponse(values: r.takeRest()) },
                 display: { r, _, f throws(DecodeError) in ATTShow.value(r.rest(), uuid: nil, &f, "Set Of Values") }),
        ATTEntry(.readMultipleVariableRequest, "Read Multiple Variable Request", .request,
                 response: .readMultipleVariableResponse, size: .atLeast(4),
                 decode: { r throws(DecodeError) in .readMultipleVariableRequest(handles: try handleSet(&r)) },
                 display: { r, ctx, f throws(DecodeError) in try showHandleSet(&r, ctx, &f) }),
        ATTEntry(.readMultipleVariableResponse, "Read Multiple Variable Response", .response, size: .atLeast(2),
                 decode: { r throws(DecodeError) in .readMultipleVariableResponse(try readMultipleVariable(&r)) },
                 display: { r, _, f throws(DecodeError) in
                     var items: [[Field]] = []
                     while r.remaining >= 2 {
                         let length = try r.u16le("Value Length")
                         var item = [Field("Length", .integer(UInt64(length), .decimal(bytes: 2)))]
                         let present = min(Int(length), r.remaining)
                         item.append(Field(.attValue, "Value", .bytes(try r.copy(present, "Attribute Value"))))
                         if present < Int(length) {
                             item.append(Field("Truncated", .note("\(present) of \(length) bytes (cut at ATT_MTU - 1)")))
                         }
                         items.append(item)
                     }
                     f.append(Field(.attValue, "Length Value Tuple List", .list(items)))
                     if r.remaining > 0 {
                         _ = r.rest()
                         f.append(Field("Truncated", .note("1 byte of a Value Length (cut at ATT_MTU - 1)")))
                     }
                 }),
    ]

    /// Set Of Handles for display: one `Handle` field each (with its `Attribute` when known).
    static func showHandleSet(_ r: inout ByteReader, _ ctx: ATTDisplayContext, _ f: inout [Field]) throws(DecodeError) {
        try evenList(r, element: 2, "Set Of Handles")
        while !r.isAtEnd { try ATTShow.handle(&r, ctx, &f) }
    }

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
