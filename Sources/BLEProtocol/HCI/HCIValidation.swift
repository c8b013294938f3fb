import BLEBytes

/// The structural check of an HCI packet without decoding its fields: header present, declared
/// length equal to the bytes present, parameter length allowed by the table row's size rule.
/// Used by the analysis pass on every frame, so it must stay O(1) and allocation-free.
public enum HCIValidation {
    /// Returns why the packet is malformed, or nil. `captureTruncated`: the capture kept fewer bytes
    /// than were on the wire, so a short packet is not a protocol error.
    public static func check(_ type: HCIPacketType, _ bytes: UnsafeRawBufferPointer, base: Int,
                             captureTruncated: Bool) -> DecodeError? {
        func truncated(_ needed: Int, _ field: StaticString) -> DecodeError {
            DecodeError(kind: .truncated(needed: needed, available: bytes.count), offset: base, field: field)
        }
        func lengthCheck(_ declared: Int, headerSize: Int, _ field: StaticString) -> DecodeError? {
            let actual = bytes.count - headerSize
            if declared == actual || (captureTruncated && declared > actual) { return nil }
            return DecodeError(kind: .lengthMismatch(declared: declared, actual: actual), offset: base + headerSize, field: field)
        }
        func sizeRule(_ rule: SizeRule, _ length: Int, at offset: Int, _ field: StaticString) -> DecodeError? {
            if captureTruncated || rule.accepts(length) { return nil }
            return DecodeError(kind: .lengthMismatch(declared: rule.minimum, actual: length), offset: base + offset, field: field)
        }
        switch type {
        case .command:
            guard bytes.count >= 3 else { return truncated(3, "HCI Command header") }
            let plen = Int(bytes[2])
            if let e = lengthCheck(plen, headerSize: 3, "Parameter Total Length") { return e }
            let opcode = UInt16(bytes[0]) | UInt16(bytes[1]) << 8
            if let size = HCIDecoder.commands.size(of: opcode) { return sizeRule(size, plen, at: 3, "Command Parameters") }
            return nil
        case .event:
            guard bytes.count >= 2 else { return truncated(2, "HCI Event header") }
            let plen = Int(bytes[1])
            if let e = lengthCheck(plen, headerSize: 2, "Parameter Total Length") { return e }
            switch bytes[0] {
            case HCIEventCode.commandComplete:
                guard plen >= 3 else { return sizeRule(SizeRule(minimum: 3, fixed: false), plen, at: 2, "Command Complete") }
                // A packet cut by the capture may end before the opcode: nothing more to check then.
                guard bytes.count >= 5 else { return nil }
                let opcode = UInt16(bytes[3]) | UInt16(bytes[4]) << 8
                // Every Command Complete carries at least the status byte, unless it is the NOP (opcode 0).
                // A failed command may return only its Status (btmon accepts that too).
                if let returns = HCIDecoder.commands.returnsSize(of: opcode), plen - 3 != 1 {
                    return sizeRule(returns, plen - 3, at: 5, "Return Parameters")
                }
                return nil
            case HCIEventCode.commandStatus:
                return sizeRule(SizeRule(minimum: 4, fixed: true), plen, at: 2, "Command Status")
            case HCIEventCode.leMeta:
                guard plen >= 1 else { return sizeRule(SizeRule(minimum: 1, fixed: false), plen, at: 2, "Subevent Code") }
                guard bytes.count >= 3 else { return nil }
                if let size = HCIDecoder.leMeta.size(of: UInt16(bytes[2])) { return sizeRule(size, plen - 1, at: 3, "Subevent Parameters") }
                return nil
            default:
                if let size = HCIDecoder.events.size(of: UInt16(bytes[0])) { return sizeRule(size, plen, at: 2, "Event Parameters") }
                return nil
            }
        case .acl:
            guard bytes.count >= 4 else { return truncated(4, "ACL header") }
            return lengthCheck(Int(UInt16(bytes[2]) | UInt16(bytes[3]) << 8), headerSize: 4, "Data Total Length")
        case .sco:
            guard bytes.count >= 3 else { return truncated(3, "SCO header") }
            return lengthCheck(Int(bytes[2]), headerSize: 3, "Data Total Length")
        case .iso:
            guard bytes.count >= 4 else { return truncated(4, "ISO header") }
            return lengthCheck(Int((UInt16(bytes[2]) | UInt16(bytes[3]) << 8) & 0x3FFF), headerSize: 4, "Data Total Length")
        }
    }
}
