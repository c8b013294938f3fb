import BLEBytes

/// Builds HCI event packets from the decoding tables (`HCIDecoder.events`, `HCIDecoder.leMeta`),
/// as `HCICommandEncoding` builds commands: the row names the parameters and their widths, the caller
/// gives values by `ParamKey`. Used where an event is made rather than captured (the LL air
/// adapter's advertising reports and completed packets), so its layout is the row that decodes it.
public enum HCIEventEncoding {
    public typealias Value = HCICommandEncoding.Value
    public typealias Failure = HCICommandEncoding.Failure

    /// Event Code of the LE Meta event (Core v5.4 Vol 4 Part E 7.7.65).
    static let leMetaCode: UInt8 = 0x3E

    /// The event packet (event code, parameter length, parameters; no H4 indicator) of `code`'s row
    /// in the event table. Parameters left out are an error.
    public static func event(_ code: UInt8, _ values: [ParamKey: Value]) throws(Failure) -> [UInt8] {
        guard let row = HCIDecoder.events[UInt16(code)] else { throw .unknownEvent(code: code, subevent: nil) }
        var parameters = ByteWriter()
        try HCICommandEncoding.write(row.parameters, values, into: &parameters)
        return packet(code, parameters.bytes)
    }

    /// An LE Meta event (7.7.65): the subevent code, then the parameters of its row in the LE Meta table.
    public static func leMeta(_ subevent: UInt8, _ values: [ParamKey: Value]) throws(Failure) -> [UInt8] {
        guard let row = HCIDecoder.leMeta[UInt16(subevent)] else { throw .unknownEvent(code: leMetaCode, subevent: subevent) }
        var parameters = ByteWriter()
        parameters.u8(subevent)
        try HCICommandEncoding.write(row.parameters, values, into: &parameters)
        return packet(leMetaCode, parameters.bytes)
    }

    /// Event header (Vol 4 Part E 5.4.4): code, Parameter_Total_Length (one byte, as sent), parameters.
    private static func packet(_ code: UInt8, _ parameters: [UInt8]) -> [UInt8] {
        var w = ByteWriter(capacity: parameters.count + 2)
        w.u8(code); w.u8(UInt8(truncatingIfNeeded: parameters.count)); w.append(parameters)
        return w.bytes
    }
}
