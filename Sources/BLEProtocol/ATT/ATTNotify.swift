import BLEBytes

/// Server-initiated PDUs, Core v5.4 Vol 3 Part F 3.4.7: Handle Value Notification, Indication,
/// Confirmation and Multiple Handle Value Notification. The notification is the hottest PDU in a
/// capture: its typed decoder reads two bytes and keeps the value as a range.
extension ATTDecoding {
    static let notifyRows: [ATTEntry] = [
        ATTEntry(.handleValueNotification, "Handle Value Notification", .notification, size: .atLeast(2),
                 decode: { r throws(DecodeError) in
                     .handleValueNotification(handle: try r.u16le("Attribute Handle"), value: r.takeRest())
                 },
                 display: showHandleValue),
        ATTEntry(.handleValueIndication, "Handle Value Indication", .indication, response: .handleValueConfirmation,
                 size: .atLeast(2),
                 decode: { r throws(DecodeError) in
                     .handleValueIndication(handle: try r.u16le("Attribute Handle"), value: r.takeRest())
                 },
                 display: showHandleValue),
        ATTEntry(.handleValueConfirmation, "Handle Value Confirmation", .confirmation, size: .exactly(0),
                 decode: { _ throws(DecodeError) in .handleValueConfirmation },
                 display: { _, _, _ throws(DecodeError) in }),
        ATTEntry(.multipleHandleValueNotification, "Multiple Handle Value Notification", .notification, size: .atLeast(4),
                 decode: { r throws(DecodeError) in
                     var values: [ATT.HandleValue] = []
                     while !r.isAtEnd {
                         let handle = try r.u16le("Attribute Handle")
                         let length = try r.u16le("Value Length")
                         values.append(ATT.HandleValue(handle: handle, value: try r.takeRange(Int(length), "Attribute Value")))
                     }
                     return .multipleHandleValueNotification(ATT.MultipleHandleValueNotification(values: values))
                 },
                 display: { r, ctx, f throws(DecodeError) in
                     var items: [[Field]] = []
                     defer { f.append(Field(.attValue, "Handle Length Value Tuple List", .list(items))) }
                     while !r.isAtEnd {
                         var item: [Field] = []
                         let h = try ATTShow.handle(&r, ctx, &item)
                         let length = try r.u16le("Value Length")
                         item.append(Field("Length", .integer(UInt64(length), .decimal(bytes: 2))))
                         items.append(item)
                         let value = try r.slice(Int(length), "Attribute Value")
                         ATTShow.value(value, uuid: ctx.valueUUID(h), &items[items.count &- 1])   // safe: just appended
                     }
                 }),
    ]

    /// Handle, then the value decoded by the characteristic at that handle.
    static let showHandleValue: ATTEntry.Display = { r, ctx, f throws(DecodeError) in
        let h = try ATTShow.handle(&r, ctx, &f)
        ATTShow.restValue(&r, handle: h, ctx, &f)
    }
}
