import BLEProtocol

extension FieldSpec {
    var isAddressType: Bool { if case .addressType = self { return true }; return false }
}

/// Rewrites recorded host packets for the live controller: connection handles recorded → live,
/// peer addresses by `--map-address`, and ACL packets split to the live buffer size.
enum HostRewriter {
    /// A command with its fixed-position `Handle` and `Address` parameters rewritten (the table
    /// row of the opcode says where they are; parameters after a variable-length one are left).
    static func command(_ bytes: [UInt8], maps: LinkMaps) -> [UInt8] {
        guard bytes.count >= 3, let opcode = bytes.withReader({ HCIPacketHeader.commandOpcode($0)?.rawValue }) else { return bytes }
        if opcode == HCIOpcode.hostNumberOfCompletedPackets.rawValue { return completedPackets(bytes, maps: maps) }
        guard let entry = HCIDecoder.commands[opcode] else { return bytes }
        var out = bytes
        var typeOffset: Int?   // the address type parameter just before, if any
        for (param, at, size) in SizeRule.fixedLayout(entry.parameters) {
            let offset = HCIPacketHeader.commandHeaderSize + at
            guard offset + size <= out.count else { break }
            switch param.spec {
            case .handle:
                guard let word = out.withReader({ $0.getU16le(at: offset) }) else { break }
                out.setU16le(maps.live(word & 0x0FFF) | (word & 0xF000), at: offset)
            case .address:
                guard let value = out.withReader({ $0.getU48le(at: offset) }) else { break }
                out.setU48le(maps.live(BDAddr(value)).value, at: offset)
                // A peer that lives at another kind of address (a twin's random static address
                // for a recorded public one): its type before it too.
                if let t = typeOffset, let type = maps.addressTypes[BDAddr(value)] { out[t] = type }
            default:
                break
            }
            typeOffset = param.spec.isAddressType ? offset : nil
        }
        return out
    }

    /// Host Number Of Completed Packets with each handle of its list mapped: Num_Handles, then
    /// (Connection_Handle, Host_Num_Completed_Packets) pairs.
    private static func completedPackets(_ bytes: [UInt8], maps: LinkMaps) -> [UInt8] {
        var out = bytes
        // Num_Handles is the first parameter; the pairs follow it.
        guard let n = out.withReader({ HCIPacketHeader.commandParameters($0)?.peekU8() }) else { return out }
        for i in 0 ..< Int(n) {
            let o = 4 + i * 4
            guard let word = out.withReader({ $0.getU16le(at: o) }) else { break }
            out.setU16le(maps.live(word & 0x0FFF), at: o)
        }
        return out
    }

    /// An ACL packet with its handle mapped, split into packets of at most `maxLength` data bytes
    /// (`L2CAPEncoding.aclPackets`: the recorded flags on the first, continuations flagged 0b01).
    static func acl(_ packet: H4Packet, maps: LinkMaps, maxLength: Int?) -> [H4Packet] {
        let b = packet.bytes
        guard packet.type == .acl, let header = b.withReader({ HCIPacketHeader.acl($0) }) else { return [packet] }
        let flags = UInt16(header.packetBoundary) << 12 | UInt16(header.broadcast) << 14
        return L2CAPEncoding.aclPackets(handle: maps.live(header.handle), data: b[ACLHeader.size...], maxLength: maxLength ?? (b.count - ACLHeader.size),
                                        flags: flags).map { H4Packet(.acl, $0) }
    }

    /// Connection-interval ranges (×1.25 ms) the host asks for: LE (Extended) Create Connection
    /// for the next connection, LE Connection Update for a live handle.
    static func noteIntervalRequest(_ command: UnitView, maps: inout LinkMaps) {
        guard let min = command.fields.first(where: { $0.id == .minConnectionInterval }),
              let max = command.fields.first(where: { $0.id == .maxConnectionInterval }),
              case let .integer(lo, _) = min.value, case let .integer(hi, _) = max.value, lo <= hi else { return }
        if command.opcode == HCIOpcode.leConnectionUpdate.rawValue, let h = command.integer(.connectionHandle) {
            maps.updateIntervalRanges[UInt16(truncatingIfNeeded: h)] = lo...hi
        } else {
            maps.pendingIntervalRange = lo...hi
        }
    }
}
