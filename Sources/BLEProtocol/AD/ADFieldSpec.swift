import BLEBytes

/// Advertising data as a field value: a list of AD structures (Core v5.4 Vol 3 Part C 11,
/// Core Supplement Part A). Each structure is `length` (type + data), `type`, data.
/// These are `FieldSpec.custom` readers for the HCI tables; they never throw on bad AD data
/// (advertising data is never fatal to a frame), only when the HCI parameters themselves are short.
public enum ADFieldSpec {
    /// Legacy advertising / scan response data: 31 significant bytes (the rest is padding).
    @Sendable public static func advertisingData31(_ r: inout ByteReader) throws(DecodeError) -> FieldValue {
        var data = r.rest()
        return structures(&data)
    }

    /// Extended advertising data: the rest of the parameters.
    @Sendable public static func advertisingDataRest(_ r: inout ByteReader) throws(DecodeError) -> FieldValue {
        var data = r.rest()
        return structures(&data)
    }

    /// Extended Inquiry Response: 240 bytes.
    @Sendable public static func eir240(_ r: inout ByteReader) throws(DecodeError) -> FieldValue {
        var data = r.rest()
        return structures(&data)
    }

    /// Decodes AD structures until the data ends or a zero length (padding) is met. A structure whose
    /// length runs past the data is kept raw with a note, and malformed data inside a structure is a
    /// note on that structure: decoding continues with the next one.
    public static func structures(_ r: inout ByteReader) -> FieldValue {
        var items: [[Field]] = []
        var it = AD.StructureIterator(r)
        while var s = it.next() {
            items.append(structureFields(s.type, &s.data))
        }
        if let problem = it.problem {
            items.append([Field(.malformed, "Malformed", .note(problem)), Field("Data", .bytes(Array(it.rest.remainingBytes)))])
        }
        _ = r.rest()
        return .list(items)
    }

    /// One structure's fields (type, then decoded data), as `ADDecoding.decode` gives them.
    static func structureFields(_ type: ADType, _ data: inout ByteReader) -> [Field] {
        var fields = [Field(.adType, "Type", .integer(UInt64(type.rawValue), .named(bytes: 1, ADDecoding.typeNames)))]
        ADDecoding.decodeData(type, &data, into: &fields)
        return fields
    }
}

extension ADFieldSpec {
    /// A one-byte length, then that many bytes of advertising data (advertising reports).
    @Sendable public static func lengthPrefixed(_ r: inout ByteReader) throws(DecodeError) -> FieldValue {
        let length = try r.u8("Data Length")
        var data = try r.slice(Int(length), "Data")
        return structures(&data)
    }
}
