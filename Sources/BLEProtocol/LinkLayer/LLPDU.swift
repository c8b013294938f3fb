import BLEBytes

/// CONNECT_IND (AUX_CONNECT_REQ) LLData, Core v5.4 Vol 6 Part B 2.3.3.1.
public struct LLConnectIndication: Sendable, Equatable {
    public var initiator: BDAddr
    public var initiatorRandom: Bool
    public var advertiser: BDAddr
    public var advertiserRandom: Bool
    public var accessAddress: UInt32
    public var crcInit: UInt32
    /// ×1.25 ms.
    public var windowSize: UInt8
    /// ×1.25 ms.
    public var windowOffset: UInt16
    /// connInterval, ×1.25 ms.
    public var intervalUnits: UInt16
    public var latency: UInt16
    /// connSupervisionTimeout, ×10 ms.
    public var timeoutUnits: UInt16
    /// ChM: bit n = data channel n used (37 bits).
    public var channelMap: UInt64
    /// hopIncrement, 5…16.
    public var hop: UInt8
    /// Sleep clock accuracy code (0: 251–500 ppm … 7: 0–20 ppm).
    public var sca: UInt8

    public var usedChannels: Int { channelMap.nonzeroBitCount }
}

/// Advertising channel PDUs, Core v5.4 Vol 6 Part B 2.3.
public enum LLAdvertisingPDU: Sendable, Equatable {
    /// ADV_IND (0), ADV_NONCONN_IND (2), ADV_SCAN_IND (6), SCAN_RSP (4): AdvA + AdvData (offset/length in the frame payload).
    case advertising(type: UInt8, advertiser: BDAddr, random: Bool, dataOffset: Int, dataLength: Int)
    /// ADV_DIRECT_IND (1).
    case directed(advertiser: BDAddr, random: Bool, target: BDAddr, targetRandom: Bool)
    /// SCAN_REQ (3).
    case scanRequest(scanner: BDAddr, scannerRandom: Bool, advertiser: BDAddr, advertiserRandom: Bool)
    /// CONNECT_IND (5).
    case connect(LLConnectIndication)
    /// ADV_EXT_IND, AUX_ADV_IND, AUX_SCAN_RSP, AUX_CHAIN_IND (7, 2.3.4): the Common Extended
    /// Advertising Payload; which one it is follows from the channel and what came before.
    case extended(LLExtendedAdvertising)
    /// AUX_CONNECT_RSP and reserved types: shown, not turned into HCI events.
    case other(type: UInt8)

    public static let typeNames = NameTable([
        (0, "ADV_IND"), (1, "ADV_DIRECT_IND"), (2, "ADV_NONCONN_IND"), (3, "SCAN_REQ"), (4, "SCAN_RSP"),
        (5, "CONNECT_IND"), (6, "ADV_SCAN_IND"), (7, "ADV_EXT_IND"), (8, "AUX_CONNECT_RSP"),
    ])

    /// Decodes the payload of an advertising-channel packet.
    /// - Throws: `DecodeError` when the payload is shorter than the PDU type requires.
    public static func decode(_ p: LLAirPacket, _ bytes: UnsafeRawBufferPointer, base: Int) throws(DecodeError) -> LLAdvertisingPDU {
        var r = ByteReader(UnsafeRawBufferPointer(rebasing: bytes[p.payloadOffset ..< p.payloadOffset + p.payloadLength]),
                           base: base + p.payloadOffset)
        switch p.advertisingType {
        case 0, 2, 4, 6:
            let a = try r.address("AdvA")
            return .advertising(type: p.advertisingType, advertiser: a, random: p.txAddRandom,
                                dataOffset: p.payloadOffset + 6, dataLength: r.remaining)
        case 1:
            let a = try r.address("AdvA"), t = try r.address("TargetA")
            return .directed(advertiser: a, random: p.txAddRandom, target: t, targetRandom: p.rxAddRandom)
        case 3:
            let s = try r.address("ScanA"), a = try r.address("AdvA")
            return .scanRequest(scanner: s, scannerRandom: p.txAddRandom, advertiser: a, advertiserRandom: p.rxAddRandom)
        case 5:
            let i = try r.address("InitA"), a = try r.address("AdvA")
            let aa = try r.u32le("AA")
            let crc = try r.u24le("CRCInit")
            let win = try r.u8("WinSize")
            let offset = try r.u16le("WinOffset")
            let interval = try r.u16le("Interval")
            let latency = try r.u16le("Latency")
            let timeout = try r.u16le("Timeout")
            let lo = UInt64(try r.u32le("ChM")), hi = UInt64(try r.u8("ChM"))
            let hopSCA = try r.u8("Hop, SCA")
            return .connect(LLConnectIndication(initiator: i, initiatorRandom: p.txAddRandom, advertiser: a, advertiserRandom: p.rxAddRandom,
                                                accessAddress: aa, crcInit: crc, windowSize: win, windowOffset: offset,
                                                intervalUnits: interval, latency: latency, timeoutUnits: timeout,
                                                channelMap: (hi << 32 | lo) & 0x1F_FFFF_FFFF, hop: hopSCA & 0x1F, sca: hopSCA >> 5))
        case 7:
            guard let e = LLExtendedAdvertising.read(r, txAddRandom: p.txAddRandom, rxAddRandom: p.rxAddRandom) else {
                throw DecodeError(kind: .truncated(needed: 1, available: r.remaining), offset: base + p.payloadOffset,
                                  field: "Extended Header")
            }
            return .extended(e.offset(by: p.payloadOffset))
        default:
            return .other(type: p.advertisingType)
        }
    }
}

/// A Common Extended Advertising Payload decoded (Core v5.4 Vol 6 Part B 2.3.4): AdvMode, the
/// optional fields its Extended Header Flags say are present, and where AdvData lies.
public struct LLExtendedAdvertising: Sendable, Equatable {
    /// AdvMode (2.3.4.1): bit 0 connectable, bit 1 scannable.
    public var mode: UInt8
    public var advertiser: BDAddr?
    public var advertiserRandom: Bool
    public var target: BDAddr?
    public var targetRandom: Bool
    /// ADI (2.3.4.5): Advertising Data ID (12 bits) and Advertising Set ID (4 bits).
    public var dataID: UInt16?
    public var setID: UInt8?
    /// AuxPtr (2.3.4.4): more follows on `auxChannel` (channel index) on `auxPHY` (0 1M, 1 2M, 2 Coded).
    public var auxChannel: UInt8?
    public var auxPHY: UInt8?
    /// SyncInfo present (2.3.4.6): the set also advertises periodically.
    public var hasSyncInfo = false
    /// TxPower (2.3.4.8), dBm.
    public var txPower: Int8?
    /// AdvData, as offsets from the payload's first byte (frame payload after `offset(by:)`).
    public var dataOffset: Int
    public var dataLength: Int

    public var connectable: Bool { mode & 1 != 0 }
    public var scannable: Bool { mode & 2 != 0 }

    /// Reads the payload `r` (the PDU's payload); nil when it is empty or shorter than its Extended
    /// Header Length says.
    static func read(_ r: ByteReader, txAddRandom: Bool, rxAddRandom: Bool) -> LLExtendedAdvertising? {
        guard let layout = LLExtendedAdvertisingLayout.read(r), let first = r.getU8(at: 0) else { return nil }
        var e = LLExtendedAdvertising(mode: first >> 6, advertiserRandom: txAddRandom, targetRandom: rxAddRandom,
                                      dataOffset: layout.advData, dataLength: r.bytes.count - layout.advData)
        e.advertiser = layout.advA.flatMap { r.getU48le(at: $0) }.map(BDAddr.init)
        e.target = layout.targetA.flatMap { r.getU48le(at: $0) }.map(BDAddr.init)
        if let at = layout.adi, let adi = r.getU16le(at: at) {
            e.dataID = adi & 0x0FFF
            e.setID = UInt8(adi >> 12)
        }
        if let at = layout.auxPtr, let channel = r.getU8(at: at), let offsetPHY = r.getU16le(at: at + 1) {
            e.auxChannel = channel & 0x3F
            e.auxPHY = UInt8(offsetPHY >> 13)
        }
        e.hasSyncInfo = layout.syncAccessAddress != nil
        e.txPower = layout.txPower.flatMap { r.getU8(at: $0) }.map { Int8(bitPattern: $0) }
        return e
    }

    func offset(by n: Int) -> LLExtendedAdvertising {
        var e = self
        e.dataOffset += n
        return e
    }
}

/// Where the fields of a Common Extended Advertising Payload (Core v5.4 Vol 6 Part B 2.3.4: ADV_EXT_IND,
/// AUX_* and AUX_CONNECT_RSP) lie, as offsets from the payload's first byte: for code that edits them
/// in place (redaction). The extended header's optional fields come in flag order (2.3.4.1): AdvA,
/// TargetA, CTEInfo, ADI, AuxPtr, SyncInfo, TxPower, ACAD; AdvData follows the header.
public struct LLExtendedAdvertisingLayout: Sendable, Equatable {
    /// AdvA and TargetA (6 bytes each), when present and inside the header.
    public var advA: Int?
    public var targetA: Int?
    /// SyncInfo's Access Address (4 bytes) and CRCInit (3 bytes), 2.3.4.6, when SyncInfo is present.
    public var syncAccessAddress: Int?
    public var syncCRCInit: Int?
    /// ADI (2 bytes), AuxPtr (3 bytes) and TxPower (1 byte), when present and inside the header.
    public var adi: Int?
    public var auxPtr: Int?
    public var txPower: Int?
    /// Where AdvData starts; it runs to the payload's end.
    public var advData: Int

    /// The layout of `payload` (the PDU's payload, `LLAirPacket.payloadOffset`…); nil when the
    /// payload is empty or shorter than its Extended Header Length says.
    public static func read(_ payload: ByteReader) -> LLExtendedAdvertisingLayout? {
        guard let first = payload.getU8(at: 0) else { return nil }
        let headerLength = Int(first & 0x3F)   // Extended Header Length, 6 bits; AdvMode above it
        let end = 1 + headerLength
        guard end <= payload.bytes.count else { return nil }
        var layout = LLExtendedAdvertisingLayout(advData: end)
        guard headerLength >= 1, let flags = payload.getU8(at: 1) else { return layout }
        var i = 2
        if flags & 0x01 != 0, i + 6 <= end { layout.advA = i; i += 6 }      // AdvA
        if flags & 0x02 != 0, i + 6 <= end { layout.targetA = i; i += 6 }   // TargetA
        if flags & 0x04 != 0 { i += 1 }                                     // CTEInfo
        if flags & 0x08 != 0 { if i + 2 <= end { layout.adi = i }; i += 2 }     // ADI
        if flags & 0x10 != 0 { if i + 3 <= end { layout.auxPtr = i }; i += 3 }  // AuxPtr
        if flags & 0x20 != 0 {                                              // SyncInfo: offset/units 2, interval 2, ChM+SCA 5, AA 4, CRCInit 3, event counter 2
            if i + 18 <= end {
                layout.syncAccessAddress = i + 9
                layout.syncCRCInit = i + 13
            }
            i += 18
        }
        if flags & 0x40 != 0, i + 1 <= end { layout.txPower = i }          // TxPower
        return layout
    }
}

/// LL Control PDUs the analysis acts on, Core v5.4 Vol 6 Part B 2.4.2; the rest are `.other`.
public enum LLControlPDU: Sendable, Equatable {
    /// Opcodes a refusal names (LL_UNKNOWN_RSP's UnknownType, LL_REJECT_EXT_IND's RejectOpcode).
    public static let lengthRequestOpcode: UInt8 = 0x14
    public static let phyRequestOpcode: UInt8 = 0x16

    case connectionUpdate(windowSize: UInt8, windowOffset: UInt16, intervalUnits: UInt16, latency: UInt16, timeoutUnits: UInt16, instant: UInt16)
    case channelMap(map: UInt64, instant: UInt16)
    case terminate(reason: UInt8)
    case encryptionRequest
    case encryptionResponse
    case startEncryptionRequest
    case startEncryptionResponse
    case unknownResponse(type: UInt8)
    case featureRequest(UInt64)
    case featureResponse(UInt64)
    case peripheralFeatureRequest(UInt64)
    case pauseEncryptionRequest
    case pauseEncryptionResponse
    case version(version: UInt8, company: UInt16, subversion: UInt16)
    case reject(reason: UInt8)
    case rejectExtended(opcode: UInt8, reason: UInt8)
    case connectionParameterRequest(minUnits: UInt16, maxUnits: UInt16, latency: UInt16, timeoutUnits: UInt16)
    case connectionParameterResponse(minUnits: UInt16, maxUnits: UInt16, latency: UInt16, timeoutUnits: UInt16)
    case lengthRequest(rxOctets: UInt16, rxTime: UInt16, txOctets: UInt16, txTime: UInt16)
    case lengthResponse(rxOctets: UInt16, rxTime: UInt16, txOctets: UInt16, txTime: UInt16)
    case phyRequest(tx: UInt8, rx: UInt8)
    case phyResponse(tx: UInt8, rx: UInt8)
    case phyUpdate(centralToPeripheral: UInt8, peripheralToCentral: UInt8, instant: UInt16)
    case other(opcode: UInt8)

    /// Decodes a control PDU payload (opcode first).
    /// - Throws: `DecodeError` when it is shorter than its opcode requires.
    public static func decode(_ r: inout ByteReader) throws(DecodeError) -> LLControlPDU {
        let opcode = try r.u8("Opcode")
        switch opcode {
        case 0x00:
            return .connectionUpdate(windowSize: try r.u8("WinSize"), windowOffset: try r.u16le("WinOffset"),
                                     intervalUnits: try r.u16le("Interval"), latency: try r.u16le("Latency"),
                                     timeoutUnits: try r.u16le("Timeout"), instant: try r.u16le("Instant"))
        case 0x01:
            let lo = UInt64(try r.u32le("ChM")), hi = UInt64(try r.u8("ChM"))
            return .channelMap(map: (hi << 32 | lo) & 0x1F_FFFF_FFFF, instant: try r.u16le("Instant"))
        case 0x02: return .terminate(reason: try r.u8("ErrorCode"))
        case 0x03: try r.skip(22, "Rand, EDIV, SKDc, IVc"); return .encryptionRequest
        case 0x04: try r.skip(12, "SKDp, IVp"); return .encryptionResponse
        case 0x05: return .startEncryptionRequest
        case 0x06: return .startEncryptionResponse
        case 0x07: return .unknownResponse(type: try r.u8("UnknownType"))
        case 0x08: return .featureRequest(try r.u64le("FeatureSet"))
        case 0x09: return .featureResponse(try r.u64le("FeatureSet"))
        case 0x0A: return .pauseEncryptionRequest
        case 0x0B: return .pauseEncryptionResponse
        case 0x0C: return .version(version: try r.u8("VersNr"), company: try r.u16le("CompId"), subversion: try r.u16le("SubVersNr"))
        case 0x0D: return .reject(reason: try r.u8("ErrorCode"))
        case 0x0E: return .peripheralFeatureRequest(try r.u64le("FeatureSet"))
        case 0x0F, 0x10:
            let a = try r.u16le("Interval_Min"), b = try r.u16le("Interval_Max"), l = try r.u16le("Latency"), t = try r.u16le("Timeout")
            return opcode == 0x0F ? .connectionParameterRequest(minUnits: a, maxUnits: b, latency: l, timeoutUnits: t)
                                  : .connectionParameterResponse(minUnits: a, maxUnits: b, latency: l, timeoutUnits: t)
        case 0x11: return .rejectExtended(opcode: try r.u8("RejectOpcode"), reason: try r.u8("ErrorCode"))
        case 0x14, 0x15:
            let a = try r.u16le("MaxRxOctets"), b = try r.u16le("MaxRxTime"), c = try r.u16le("MaxTxOctets"), d = try r.u16le("MaxTxTime")
            return opcode == 0x14 ? .lengthRequest(rxOctets: a, rxTime: b, txOctets: c, txTime: d)
                                  : .lengthResponse(rxOctets: a, rxTime: b, txOctets: c, txTime: d)
        case 0x16: return .phyRequest(tx: try r.u8("TX_PHYS"), rx: try r.u8("RX_PHYS"))
        case 0x17: return .phyResponse(tx: try r.u8("TX_PHYS"), rx: try r.u8("RX_PHYS"))
        case 0x18: return .phyUpdate(centralToPeripheral: try r.u8("PHY_C_TO_P"), peripheralToCentral: try r.u8("PHY_P_TO_C"),
                                     instant: try r.u16le("Instant"))
        default: return .other(opcode: opcode)
        }
    }
}
