import BLEBytes

/// Builds HCI command packets from the decoding tables (`HCIDecoder.commands`): the row names the
/// parameters and their widths, the caller gives values by parameter name. The encoding side of
/// the tables, so a command a twin or a test sends is laid out by the same row that decodes it.
public enum HCICommandEncoding {
    /// A parameter value: an integer (written little-endian in the row's width), an address (6
    /// bytes, little-endian), or raw bytes (written as given, zero-padded to a fixed width).
    public enum Value: Sendable {
        case int(UInt64)
        case address(BDAddr)
        case bytes([UInt8])
    }

    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        case unknownCommand(UInt16)
        case missingParameter(String)
        case unsupportedSpec(String)
        public var description: String {
            switch self {
            case let .unknownCommand(op): return "no table row for command 0x\(Hex.pad(op, 4))"
            case let .missingParameter(name): return "no value for parameter \(name)"
            case let .unsupportedSpec(name): return "parameter \(name) cannot be encoded from the table"
            }
        }
    }

    /// The command packet (opcode, parameter length, parameters; no H4 indicator). Parameters the
    /// caller leaves out are an error, so a table change cannot silently send zeros.
    public static func command(_ opcode: HCIOpcode, _ values: [String: Value] = [:]) throws(Failure) -> [UInt8] {
        guard let row = HCIDecoder.commands[opcode.rawValue] else { throw .unknownCommand(opcode.rawValue) }
        var parameters = ByteWriter()
        for param in row.parameters {
            let name = param.name.description
            guard let value = values[name] else { throw .missingParameter(name) }
            try write(value, param.spec, name: name, into: &parameters)
        }
        var w = ByteWriter(capacity: parameters.bytes.count + 3)
        w.u16le(opcode.rawValue); w.u8(UInt8(truncatingIfNeeded: parameters.bytes.count)); w.append(parameters.bytes)
        return w.bytes
    }

    /// The width in bytes a spec occupies, when fixed (nil: the caller gives the wire bytes).
    public static func width(_ spec: FieldSpec) -> Int? {
        let (size, fixed) = SizeRule.size(spec)   // the decoding table's own size rule
        return fixed ? size : nil
    }

    private static func write(_ value: Value, _ spec: FieldSpec, name: String, into w: inout ByteWriter) throws(Failure) {
        let size = width(spec)
        switch value {
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
