import BLEBytes

/// Server-initiated PDUs, Core v5.4 Vol 3 Part F 3.4.7: Handle Value Notification, Indication,
/// Confirmation and Multiple Handle Value Notification. The notification is the hottest PDU in a
/// capture: its typed decoder reads two bytes and keeps the value as a range.
extension ATTDecoding {
    static let handleValue: [ATTParam] = [
        ATTParam("Handle", spec: "Attribute Handle", .handle, key: K.attributeHandle),
        ATTParam("Value", spec: "Attribute Value", .value(.handle), key: K.attributeValue),
    ]
    static let multipleHandleValueNotification: [ATTParam] = [
        ATTParam("Handle Length Value Tuple List", spec: "Handle Length Value Tuple List", .list(.handleLengthValueTuples),
                 key: K.handleLengthValueTupleList),
    ]

    static let notifyRows: [ATTEntry] = [
        ATTEntry(.handleValueNotification, "Handle Value Notification", .notification, handleValue) { r throws(DecodeError) in
            .handleValueNotification(handle: try L.handleValueHandle.u16(r), value: try L.handleValueValue.range(r))
        },
        ATTEntry(.handleValueIndication, "Handle Value Indication", .indication, response: .handleValueConfirmation, handleValue) { r throws(DecodeError) in
            .handleValueIndication(handle: try L.handleValueHandle.u16(r), value: try L.handleValueValue.range(r))
        },
        ATTEntry(.handleValueConfirmation, "Handle Value Confirmation", .confirmation, []) { _ throws(DecodeError) in .handleValueConfirmation },
        ATTEntry(.multipleHandleValueNotification, "Multiple Handle Value Notification", .notification,
                 multipleHandleValueNotification) { r throws(DecodeError) in
            var values: [ATT.HandleValue] = []
            while !r.isAtEnd {
                let handle = try r.u16le("Attribute Handle")
                let length = try r.u16le("Value Length")
                values.append(ATT.HandleValue(handle: handle, value: try r.takeRange(Int(length), "Attribute Value")))
            }
            return .multipleHandleValueNotification(ATT.MultipleHandleValueNotification(values: values))
        },
    ]
}
