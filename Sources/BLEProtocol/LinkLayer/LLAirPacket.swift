import BLEBytes

/// The LE Link Layer as sniffers capture it over the air (Core v5.4 Vol 6 Part B 2): access
/// address, PDU header, payload, CRC, behind a capture pseudo-header that tells the RF channel,
/// the RSSI and whether the CRC was checked.
public enum LinkLayer {
    /// Access address of the primary advertising channels (Core v5.4 Vol 6 Part B 2.1.2).
    public static let advertisingAccessAddress: UInt32 = 0x8E89_BED6
    /// CRC initial value on the advertising channels (Vol 6 Part B 3.1.1).
    public static let advertisingCRCInit: UInt32 = 0x55_5555
    /// pcap link types (tcpdump.org/linktypes.html).
    public static let linkTypeLE: UInt32 = 251
    public static let linkTypeLEWithPHDR: UInt32 = 256
    public static let linkTypeNordic: UInt32 = 272
    /// LINKTYPE_USER10: the nRF Sniffer v1 wrote its Nordic header under this private link type
    /// (Wireshark maps it to nordic_ble through a user DLT, packet-nordic_ble.c).
    public static let linkTypeNordicV1: UInt32 = 157
    /// LINKTYPE_PPI: Ubertooth (and crackle's output) wrap LE LL packets in a Per-Packet Information
    /// header whose pph_dlt is 147 (LINKTYPE_USER0, Ubertooth's) or 251.
    public static let linkTypePPI: UInt32 = 192
    public static let linkTypeUser0: UInt32 = 147
    /// The PPI field Ubertooth writes (ppi_btle_t, libbtbb pcap.c): version, channel in MHz, clock, RSSI.
    static let ppiFieldBTLE: UInt16 = 30006
    /// Longest PDU payload (Vol 6 Part B 2.4: 255 with the Data Length Extension, 2.3 advertising).
    public static let maxPDUPayload = 255

    /// The 24-bit LE CRC over header and payload (Vol 6 Part B 3.1.1): polynomial
    /// x²⁴+x¹⁰+x⁹+x⁶+x⁴+x³+x+1, LFSR seeded with the CRCInit, bytes fed least significant bit
    /// first. The result compares with the three CRC bytes read little-endian.
    public static func crc(_ bytes: UnsafeRawBufferPointer, crcInit: UInt32) -> UInt32 {
        // The LFSR runs on the bit-reversed register: seed with CRCInit reversed.
        var state = reverse24(crcInit)
        for var byte in bytes {
            for _ in 0..<8 {
                let next = (state ^ UInt32(byte)) & 1
                byte >>= 1
                state >>= 1
                if next != 0 { state |= 1 << 23; state ^= 0x5A_6000 }
            }
        }
        return state
    }

    static func reverse24(_ v: UInt32) -> UInt32 {
        var r: UInt32 = 0
        for i in 0..<24 where v & (1 << UInt32(i)) != 0 { r |= 1 << UInt32(23 - i) }
        return r
    }
}

/// Who sent a data-channel PDU.
public enum LLDirection: UInt8, Sendable {
    case centralToPeripheral, peripheralToCentral, unknown
    public var name: String {
        switch self {
        case .centralToPeripheral: "Central → Peripheral"
        case .peripheralToCentral: "Peripheral → Central"
        case .unknown: "unknown direction"
        }
    }
}

/// What a data channel PDU carries, from its header's LLID (Core v5.4 Vol 6 Part B 2.4).
public enum LLID: UInt8, Sendable {
    case reserved = 0
    /// LL Data PDU: a continuation fragment of an L2CAP message, or an Empty PDU (length 0).
    case continuation = 1
    /// LL Data PDU: the start of an L2CAP message, or a complete one with no fragmentation.
    case start = 2
    /// LL Control PDU.
    case control = 3
}

/// Integrity check state as the capture reports it (or as we computed it).
public enum LLCheck: UInt8, Sendable { case valid, invalid, unchecked }

/// What the capture pseudo-header says about a packet (LINKTYPE_BLUETOOTH_LE_LL_WITH_PHDR or the
/// Nordic nRF Sniffer header). Fields the header does not carry are nil.
public struct LLRadioInfo: Sendable {
    /// The header's name for display: "LE LL PHDR", "nRF Sniffer".
    public var headerName: StaticString = "LE LL"
    public var channel: UInt8?
    public var rssi: Int8?
    public var noise: Int8?
    /// Raw PHDR or Nordic flags.
    public var flags: UInt16?
    public var crc: LLCheck = .unchecked
    public var mic: LLCheck = .unchecked
    /// The sniffer decrypted the payload (PHDR flag 0x0008; Nordic: encrypted and MIC OK).
    public var decrypted = false
    /// What the header says of encryption: true the PDU was sent encrypted, false it was not (the
    /// Nordic header states it for every data PDU: flag 0x04), nil the header does not say (PHDR, 251).
    public var encrypted: Bool?
    public var direction: LLDirection = .unknown
    /// 0 LE 1M, 1 LE 2M, 2 LE Coded.
    public var phy: UInt8?
    /// LE Coded only: the Coding Indicator after the access address (0 S=8, 1 S=2).
    public var codingIndicator: UInt8?
    /// Nordic event counter.
    public var eventCounter: UInt16?
    /// The sniffer's own clock (µs, wrapping at 2^32) when the packet started: nRF Sniffer protocol 3
    /// (Wireshark packet-nordic_ble.c, "Timestamp"). The capture's timestamps of those files are the host's
    /// reception times: packets arrive in bursts over USB, a fraction of a millisecond apart in the file.
    public var snifferTime: UInt32?
    /// The header says this is a data-channel (connection) PDU, an advertising one, or does not say.
    public var isData: Bool?
    /// The advertising packet went on a primary advertising channel (37, 38, 39) rather than a
    /// secondary one (an AUX_* PDU, Core v5.4 Vol 6 Part B 2.3.4): from the PHDR's PDU type
    /// (1: auxiliary advertising) or the channel; nil when the header says neither.
    public var primaryChannel: Bool?

    public init() {}
}

/// One over-the-air LL packet: offsets into the frame payload (no copies) plus the decoded header.
public struct LLAirPacket: Sendable {
    public var radio: LLRadioInfo
    /// Offset of the access address in the frame payload.
    public var packetOffset: Int
    public var accessAddress: UInt32
    /// The two PDU header bytes.
    public var header0: UInt8
    public var header1: UInt8
    /// Offset and length of the PDU payload (after the CTEInfo byte when present).
    public var payloadOffset: Int
    public var payloadLength: Int
    /// The CRC as captured (3 bytes little-endian), when present.
    public var crc: UInt32?
    /// Bytes after the CRC (some sniffers pad).
    public var trailing: Int
    /// The PDU's Length field.
    public var pduLength: Int { Int(header1) }

    public var isAdvertising: Bool { accessAddress == LinkLayer.advertisingAccessAddress && radio.isData != true }
    /// Header + payload, the CRC's input.
    public var pduRange: Range<Int> { headerOffset ..< (payloadOffset + pduLength) }
    /// Offset of the PDU header (after the access address, and the Coding Indicator on LE Coded).
    public var headerOffset: Int { payloadOffset - 2 - (ctePresentInHeader ? 1 : 0) }
    private var ctePresentInHeader: Bool { !isAdvertising && header0 & 0x20 != 0 }

    // Data channel PDU header (Vol 6 Part B 2.4): LLID, NESN, SN, MD, CP in the first byte, Length in the second.
    public var llid: UInt8 { header0 & 0x03 }
    public var dataLLID: LLID { LLID(rawValue: llid) ?? .reserved }
    public var nesn: Bool { header0 & 0x04 != 0 }
    public var sn: Bool { header0 & 0x08 != 0 }
    public var moreData: Bool { header0 & 0x10 != 0 }
    public var ctePresent: Bool { header0 & 0x20 != 0 }
    // Advertising channel PDU header (Vol 6 Part B 2.3).
    public var advertisingType: UInt8 { header0 & 0x0F }
    public var chSel: Bool { header0 & 0x20 != 0 }
    public var txAddRandom: Bool { header0 & 0x40 != 0 }
    public var rxAddRandom: Bool { header0 & 0x80 != 0 }

    /// Parses one record of pcap link type 251, 256 or 272.
    /// - Throws: `DecodeError` naming the field when the record is too short or its lengths lie.
    public static func parse(linkType: UInt32, _ bytes: UnsafeRawBufferPointer, base: Int) throws(DecodeError) -> LLAirPacket {
        var r = ByteReader(bytes, base: base)
        var radio = LLRadioInfo()
        switch linkType {
        case LinkLayer.linkTypeLEWithPHDR:
            radio.headerName = "LE LL PHDR"
            radio.channel = try r.u8("RF Channel")
            let signal = Int8(bitPattern: try r.u8("Signal Power"))
            let noise = Int8(bitPattern: try r.u8("Noise Power"))
            _ = try r.u8("Access Address Offenses")
            _ = try r.u32le("Reference Access Address")
            let flags = try r.u16le("Flags")
            radio.flags = flags
            if flags & 0x0002 != 0 { radio.rssi = signal }
            if flags & 0x0004 != 0 { radio.noise = noise }
            radio.decrypted = flags & 0x0008 != 0
            if flags & 0x0400 != 0 { radio.crc = flags & 0x0800 != 0 ? .valid : .invalid }
            if flags & 0x1000 != 0 { radio.mic = flags & 0x2000 != 0 ? .valid : .invalid }
            radio.phy = UInt8(truncatingIfNeeded: flags >> 14)
            switch (flags >> 7) & 7 {
            case 0: break                                   // advertising or data, direction unspecified
            case 1: radio.isData = false; radio.primaryChannel = false   // auxiliary advertising
            case 2: radio.isData = true; radio.direction = .centralToPeripheral
            case 3: radio.isData = true; radio.direction = .peripheralToCentral
            default: break
            }
        case LinkLayer.linkTypePPI:
            // PPI header (Per-Packet Information Header Specification; Wireshark packet-ppi.c): version 0,
            // flags, length (LE, header and fields), the inner link type (LE); then type/length fields.
            radio.headerName = "Ubertooth PPI"
            let start = r.position
            let version = try r.u8("PPI Version")
            guard version == 0 else { throw DecodeError(kind: .invalidValue(UInt64(version)), offset: base + start, field: "PPI Version") }
            _ = try r.u8("PPI Flags")
            let length = Int(try r.u16le("PPI Header Length"))
            let inner = try r.u32le("PPI Link Type")
            guard length >= 8 else { throw DecodeError(kind: .invalidValue(UInt64(length)), offset: base + start + 2, field: "PPI Header Length") }
            var fields = try r.slice(length - 8, "PPI Fields")
            while fields.remaining >= 4 {
                let type = try fields.u16le("PPI Field Type")
                let size = Int(try fields.u16le("PPI Field Length"))
                var field = try fields.slice(size, "PPI Field")
                if type == LinkLayer.ppiFieldBTLE, size >= 11 {
                    _ = try field.u8("BTLE Version")
                    let mhz = Int(try field.u16le("BTLE Channel"))
                    if (2402...2480).contains(mhz), mhz % 2 == 0 { radio.channel = UInt8((mhz - 2402) / 2) }   // RF channel, as the PHDR's
                    try field.skip(5, "BTLE Clock")
                    _ = try field.u8("RSSI Max"); _ = try field.u8("RSSI Min")
                    radio.rssi = Int8(bitPattern: try field.u8("RSSI Average"))
                }
            }
            guard inner == LinkLayer.linkTypeUser0 || inner == LinkLayer.linkTypeLE else {
                // Not an LE link layer inside (802.11 PPI captures, for one): say what it is.
                throw DecodeError(kind: .invalidValue(UInt64(inner)), offset: base + start + 4,
                                  field: "PPI Link Type (not an LE link layer: 147 or 251 expected)")
            }
        case LinkLayer.linkTypeNordic, LinkLayer.linkTypeNordicV1:
            radio.headerName = "nRF Sniffer"
            if r.peekU8() == 0xBE, r.peekU8(at: 1) == 0xEF {
                // Legacy header (nRF Sniffer 0.9.7, version 0; packet-nordic_ble.c): the 0xBEEF marker instead
                // of a board ID, packet ID, counter, 2 unused bytes, payload length; then a 9-byte event
                // packet (flags, channel, RSSI, event counter, delta time) with no length byte.
                try r.skip(2, "Legacy Marker")
                _ = try r.u8("Packet ID")
                _ = try r.u16le("Packet Counter")
                try r.skip(2, "Unused")
                _ = try r.u8("Payload Length")
                let flags = try r.u8("Flags")
                radio.flags = UInt16(flags)
                radio.channel = try r.u8("Channel")
                radio.rssi = Int8(truncatingIfNeeded: -Int(try r.u8("RSSI")))
                radio.eventCounter = try r.u16le("Event Counter")
                _ = try r.u32le("Delta Time")
                radio.crc = flags & 1 != 0 ? .valid : .invalid
                var peek = r
                let isData = ((try? peek.u32le("Access Address")) ?? 0) != LinkLayer.advertisingAccessAddress
                radio.isData = isData
                if isData {
                    radio.direction = flags & 2 != 0 ? .centralToPeripheral : .peripheralToCentral
                    radio.encrypted = flags & 4 != 0
                    if flags & 4 != 0 {
                        radio.mic = flags & 8 != 0 ? .valid : .invalid
                        radio.decrypted = flags & 8 != 0
                    }
                }
                break
            }
            _ = try r.u8("Board")
            var version: UInt8
            if r.peekU8(at: 2).map({ $0 >= 2 }) ?? false {
                _ = try r.u16le("Payload Length")
                version = try r.u8("Protocol Version")
            } else {
                _ = try r.u8("Header Length")
                _ = try r.u8("Payload Length")
                version = try r.u8("Protocol Version")
            }
            _ = try r.u16le("Packet Counter")
            let id = try r.u8("Packet ID")
            let eventLength = Int(try r.u8("Event Packet Length"))
            guard eventLength >= 10 else {
                throw DecodeError(kind: .invalidValue(UInt64(eventLength)), offset: r.absoluteOffset - 1, field: "Event Packet Length")
            }
            let flags = try r.u8("Flags")
            radio.flags = UInt16(flags)
            radio.channel = try r.u8("Channel")
            radio.rssi = Int8(truncatingIfNeeded: -Int(try r.u8("RSSI")))
            radio.eventCounter = try r.u16le("Event Counter")
            let timestamp = try r.u32le("Timestamp")
            if version >= 3 { radio.snifferTime = timestamp }   // before 3: the time since the previous packet
            try r.skip(eventLength - 10, "Event Packet Header")
            radio.crc = flags & 1 != 0 ? .valid : .invalid
            radio.phy = (flags >> 4) & 7
            if version >= 3 { radio.isData = id == 0x06 ? true : id == 0x02 ? false : nil }
            var peek = r
            let aa = (try? peek.u32le("Access Address")) ?? 0
            let isData = radio.isData ?? (aa != LinkLayer.advertisingAccessAddress)
            radio.isData = isData
            if isData {
                // Flags of EVENT_PACKET_DATA: 0x02 direction (1 Central → Peripheral), 0x04 encrypted,
                // 0x08 MIC OK, checked only when encrypted (Wireshark packet-nordic_ble.c, dissect_flags).
                radio.direction = flags & 2 != 0 ? .centralToPeripheral : .peripheralToCentral
                radio.encrypted = flags & 4 != 0
                if flags & 4 != 0 {
                    radio.mic = flags & 8 != 0 ? .valid : .invalid
                    radio.decrypted = flags & 8 != 0
                }
            }
        default:
            radio.headerName = "LE LL"
        }
        let packetOffset = r.position
        let aa = try r.u32le("Access Address")
        if radio.phy == 2 {
            // LE Coded: the Coding Indicator (FEC block 1, Vol 6 Part B 2.2) follows the access address in
            // both headers (Wireshark packet-btle.c reads it when the PHDR or Nordic PHY says Coded).
            radio.codingIndicator = try r.u8("Coding Indicator") & 0x03
        }
        let h0 = try r.u8("PDU Header")
        let length = Int(try r.u8("Length"))
        let isAdvertising = aa == LinkLayer.advertisingAccessAddress && radio.isData != true
        if !isAdvertising, h0 & 0x20 != 0 { _ = try r.u8("CTEInfo") }
        if isAdvertising, radio.primaryChannel == nil, let c = radio.channel {
            // The nRF Sniffer gives the channel index (37–39 primary), the PHDR and PPI the RF channel
            // (0, 12, 39 carry indexes 37, 38, 39: Core v5.4 Vol 6 Part B 1.4.1).
            let nordic = linkType == LinkLayer.linkTypeNordic || linkType == LinkLayer.linkTypeNordicV1
            radio.primaryChannel = nordic ? c >= 37 : (c == 0 || c == 12 || c == 39)
        }
        let payloadOffset = r.position
        let payload = try r.slice(length, "PDU Payload")
        var crc: UInt32? = nil
        if r.remaining >= 3 { crc = try r.u24le("CRC") }
        // A PDU the sniffer decrypted carries its plaintext: its Length no longer counts the MIC (as
        // tshark reads nRF Sniffer records: the payload's L2CAP fragments reassemble without 4 extra bytes).
        let payloadLength = payload.remaining
        return LLAirPacket(radio: radio, packetOffset: packetOffset, accessAddress: aa, header0: h0, header1: UInt8(length),
                           payloadOffset: payloadOffset, payloadLength: payloadLength, crc: crc, trailing: r.remaining)
    }

    /// Checks the CRC against `crcInit` when the capture did not (or could not) say.
    public func computedCRC(_ bytes: UnsafeRawBufferPointer, crcInit: UInt32) -> LLCheck {
        guard let crc, pduRange.upperBound <= bytes.count else { return .unchecked }
        return LinkLayer.crc(UnsafeRawBufferPointer(rebasing: bytes[pduRange]), crcInit: crcInit) == crc ? .valid : .invalid
    }
}
