import BLEBytes

/// Builds HCI command packets from the decoding tables (`HCIDecoder.commands`): the row lists the
/// parameters and their widths, the caller gives values by each parameter's `ParamKey` (its Core
/// specification name), never by its display label. The encoding side of the tables, so a command
/// a twin or a test sends is laid out by the same row that decodes it.
public enum HCICommandEncoding {
    /// A parameter value: an integer (written little-endian in the row's width), an address (6
    /// bytes, little-endian), raw bytes (written as given, zero-padded to a fixed width), bytes after
    /// a one-byte length (a length-prefixed field read by a custom reader, such as advertising data),
    /// or the items of a counted array (the count, then each item's parameters in order).
    public enum Value: Sendable {
        case int(UInt64)
        case address(BDAddr)
        case bytes([UInt8])
        case lengthPrefixed([UInt8])
        case list([[ParamKey: Value]])
    }

    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        case unknownCommand(UInt16)
        case missingParameter(String)
        /// The row's parameter has no `ParamKey`: give it one (its spec name) to encode the row.
        case unkeyedParameter(String)
        case unsupportedSpec(String)
        case unknownEvent(code: UInt8, subevent: UInt8?)
        public var description: String {
            switch self {
            case let .unknownCommand(op): return "no table row for command 0x\(Hex.pad(op, 4))"
            case let .unknownEvent(code, subevent):
                return "no table row for event 0x\(Hex.pad(code, 2))" + (subevent.map { " subevent 0x\(Hex.pad($0, 2))" } ?? "")
            case let .missingParameter(name): return "no value for parameter \(name)"
            case let .unkeyedParameter(name): return "parameter \(name) has no key in its table row"
            case let .unsupportedSpec(name): return "parameter \(name) cannot be encoded from the table"
            }
        }
    }

    /// The command packet (opcode, parameter length, parameters; no H4 indicator). Parameters the
    /// caller leaves out are an error, so a table change cannot silently send zeros.
    public static func command(_ opcode: HCIOpcode, _ values: [ParamKey: Value] = [:]) throws(Failure) -> [UInt8] {
        guard let row = HCIDecoder.commands[opcode.rawValue] else { throw .unknownCommand(opcode.rawValue) }
        var parameters = ByteWriter()
        try write(row.parameters, values, into: &parameters)
        return packet(opcode, parameters.bytes)
    }

    /// Command header (Vol 4 Part E 5.4.1): opcode, Parameter_Total_Length (one byte, as sent), parameters.
    private static func packet(_ opcode: HCIOpcode, _ parameters: [UInt8]) -> [UInt8] {
        var w = ByteWriter(capacity: parameters.count + 3)
        w.u16le(opcode.rawValue); w.u8(UInt8(truncatingIfNeeded: parameters.count)); w.append(parameters)
        return w.bytes
    }

    /// The width in bytes a spec occupies, when fixed (nil: the caller gives the wire bytes).
    public static func width(_ spec: FieldSpec) -> Int? {
        let (size, fixed) = SizeRule.size(spec)   // the decoding table's own size rule
        return fixed ? size : nil
    }

    /// Writes `params` in order with the values given for their keys (commands and events alike).
    static func write(_ params: [Param], _ values: [ParamKey: Value], into w: inout ByteWriter) throws(Failure) {
        for param in params {
            guard let key = param.key else { throw .unkeyedParameter(param.name.description) }
            guard let value = values[key] else { throw .missingParameter(key.rawValue) }
            try write(value, param.spec, name: key.rawValue, into: &w)
        }
    }

    private static func write(_ value: Value, _ spec: FieldSpec, name: String, into w: inout ByteWriter) throws(Failure) {
        let size = width(spec)
        switch value {
        case let .list(items):
            // Arrays are interleaved per item on the wire (Core v5.4 Vol 4 Part E 5.2).
            guard case let .counted(countBytes, params) = spec else { throw .unsupportedSpec(name) }
            for i in 0..<countBytes { w.u8(UInt8(truncatingIfNeeded: items.count >> (8 * i))) }
            for item in items { try write(params, item, into: &w) }
        case let .lengthPrefixed(b):
            guard size == nil else { throw .unsupportedSpec(name) }
            w.u8(UInt8(truncatingIfNeeded: b.count)); w.append(b)
        case let .int(v):
            guard let size, size <= 8 else { throw .unsupportedSpec(name) }
            for i in 0..<size { w.u8(UInt8(truncatingIfNeeded: v >> UInt64(8 * i))) }
        case let .address(a):
            for i in 0..<6 { w.u8(UInt8(truncatingIfNeeded: a.value >> UInt64(8 * i))) }
        case let .bytes(b):
            // Fixed width: padded or cut to it; variable (custom readers such as advertising
            // data, `rest`): as given.
            if let size { w.append(b.prefix(size)); for _ in b.count ..< max(b.count, size) { w.u8(0) } } else { w.append(b) }
        }
    }
}
