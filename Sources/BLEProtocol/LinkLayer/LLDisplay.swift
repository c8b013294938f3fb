import BLEBytes

/// Display layers for over-the-air LL packets (for `packets`): the capture pseudo-header, then the
/// LL PDU (advertising PDU with its AD structures, CONNECT_IND, data PDU header, LL Control PDU).
/// Upper layers (L2CAP, ATT, SMP) of data PDUs come from the session's reassembly, as for HCI ACL.
public enum LinkLayerDisplay {
    /// Facts known only with connection context (the analysis pass supplies them when it can).
    public struct Context: Sendable {
        public var crc: LLCheck?
        public var direction: LLDirection?
        public var retransmission = false
        public var encrypted = false
        public init(crc: LLCheck? = nil, direction: LLDirection? = nil, retransmission: Bool = false, encrypted: Bool = false) {
            (self.crc, self.direction, self.retransmission, self.encrypted) = (crc, direction, retransmission, encrypted)
        }
    }

    /// Decodes one record of link type 251/256/272 into display layers. Never fails: an
    /// unparseable record gives a layer with the error and the raw bytes.
    public static func layers(linkType: UInt32, _ bytes: UnsafeRawBufferPointer, base: Int, context: Context = Context()) -> [Layer] {
        layers(Result { () throws(DecodeError) in try LLAirPacket.parse(linkType: linkType, bytes, base: base) },
               linkType: linkType, bytes, base: base, context: context)
    }

    /// The same from a packet already parsed (`LLAirPacket.parse` of these bytes, or its error).
    public static func layers(_ parsed: Result<LLAirPacket, DecodeError>, linkType: UInt32, _ bytes: UnsafeRawBufferPointer, base: Int,
                              context: Context = Context()) -> [Layer] {
        let packet: LLAirPacket
        switch parsed {
        case let .success(p): packet = p
        case let .failure(error):
            return [Layer(protocolName: "LE LL", name: "Unreadable air packet", code: "", fields: [Field("Data", .bytes(Array(bytes)))], error: error)]
        }
        var out: [Layer] = []
        if linkType != LinkLayer.linkTypeLE { out.append(radioLayer(packet.radio)) }
        out.append(pduLayer(packet, bytes, base: base, context: context))
        return out
    }

    static let checkNames = NameTable([(0, "valid"), (1, "INVALID"), (2, "not checked")])
    static let phyNames = NameTable([(0, "LE 1M"), (1, "LE 2M"), (2, "LE Coded")])
    static let llidNames = NameTable([(1, "Continuation or empty"), (2, "Start of L2CAP PDU"), (3, "LL Control PDU")])
    static let phdrFlags = NameTable([
        (0x0001, "Dewhitened"), (0x0002, "Signal Power valid"), (0x0004, "Noise Power valid"), (0x0008, "Decrypted"),
        (0x0010, "Reference Access Address valid"), (0x0020, "Access Address Offenses valid"), (0x0040, "Channel Aliased"),
        (0x0080, "PDU type bit 0"), (0x0100, "PDU type bit 1"), (0x0200, "PDU type bit 2"),
        (0x0400, "CRC Checked"), (0x0800, "CRC Valid"), (0x1000, "MIC Checked"), (0x2000, "MIC Valid"),
        (0x4000, "PHY bit 0"), (0x8000, "PHY bit 1"),
    ])

    static func radioLayer(_ radio: LLRadioInfo) -> Layer {
        var f: [Field] = []
        if let c = radio.channel { f.append(Field("RF Channel", .integer(UInt64(c), .decimal(bytes: 1)))) }
        if let s = radio.rssi { f.append(Field(.rssi, "RSSI", .integer(UInt64(UInt8(bitPattern: s)), .signed(bytes: 1, unit: "dBm")))) }
        if let n = radio.noise { f.append(Field("Noise", .integer(UInt64(UInt8(bitPattern: n)), .signed(bytes: 1, unit: "dBm")))) }
        if let flags = radio.flags {
            f.append(Field("Flags", .integer(UInt64(flags), radio.headerName.description == "LE LL PHDR" ? .flags(bytes: 2, phdrFlags) : .hex(bytes: 1))))
        }
        f.append(Field("CRC", .integer(UInt64(radio.crc.rawValue), .named(bytes: 1, checkNames))))
        if radio.mic != .unchecked { f.append(Field("MIC", .integer(UInt64(radio.mic.rawValue), .named(bytes: 1, checkNames)))) }
        if radio.decrypted { f.append(Field("Decrypted", .text("yes"))) }
        if radio.direction != .unknown { f.append(Field("Direction", .text(radio.direction.name))) }
        if let p = radio.phy { f.append(Field("PHY", .integer(UInt64(p), .named(bytes: 1, phyNames)))) }
        if let ci = radio.codingIndicator { f.append(Field("Coding Indicator", .text(ci == 0 ? "S=8 (0)" : ci == 1 ? "S=2 (1)" : "reserved (\(ci))"))) }
        if let e = radio.eventCounter { f.append(Field("Event Counter", .integer(UInt64(e), .decimal(bytes: 2)))) }
        return Layer(protocolName: "LE Radio", name: radio.headerName.description, code: "", fields: f)
    }

    static func pduLayer(_ p: LLAirPacket, _ bytes: UnsafeRawBufferPointer, base: Int, context: Context) -> Layer {
        var f = [Field("Access Address", .integer(UInt64(p.accessAddress), .hex(bytes: 4)))]
        var layer = Layer(protocolName: "LE LL", name: "", code: "", length: p.payloadLength)
        var crcCheck = context.crc ?? p.radio.crc
        var payload = ByteReader(UnsafeRawBufferPointer(rebasing: bytes[p.payloadOffset ..< p.payloadOffset + p.payloadLength]),
                                 base: base + p.payloadOffset)
        if p.isAdvertising {
            if crcCheck == .unchecked { crcCheck = p.computedCRC(bytes, crcInit: LinkLayer.advertisingCRCInit) }
            let type = p.advertisingType
            layer.name = LLAdvertisingPDU.typeNames.name(UInt64(type)) ?? "Reserved"
            layer.code = Hex.code(type, 2)
            f.append(Field("PDU Type", .integer(UInt64(type), .named(bytes: 1, LLAdvertisingPDU.typeNames))))
            f.append(Field("ChSel", .integer(p.chSel ? 1 : 0, .decimal(bytes: 1))))
            f.append(Field("TxAdd", .integer(p.txAddRandom ? 1 : 0, .named(bytes: 1, LEAddressTypeNames.table))))
            f.append(Field("RxAdd", .integer(p.rxAddRandom ? 1 : 0, .named(bytes: 1, LEAddressTypeNames.table))))
            do {
                switch try LLAdvertisingPDU.decode(p, bytes, base: base) {
                case let .advertising(_, a, random, _, _):
                    f.append(Field("AdvA", .address(a, type: random ? .randomDevice : .publicDevice)))
                    _ = try payload.skip(6, "AdvA")
                    var structures: [[Field]] = []
                    while payload.remaining > 0 {
                        let length = Int(try payload.u8("AD Length"))
                        if length == 0 { break }
                        var s = try payload.slice(length, "AD Structure")
                        structures.append(ADDecoding.decode(&s))
                    }
                    if !structures.isEmpty { f.append(Field("Advertising Data", .list(structures))) }
                case let .directed(a, random, t, trandom):
                    f.append(Field("AdvA", .address(a, type: random ? .randomDevice : .publicDevice)))
                    f.append(Field("TargetA", .address(t, type: trandom ? .randomDevice : .publicDevice)))
                case let .scanRequest(s, sr, a, ar):
                    f.append(Field("ScanA", .address(s, type: sr ? .randomDevice : .publicDevice)))
                    f.append(Field("AdvA", .address(a, type: ar ? .randomDevice : .publicDevice)))
                case let .connect(c):
                    f.append(Field("InitA", .address(c.initiator, type: c.initiatorRandom ? .randomDevice : .publicDevice)))
                    f.append(Field("AdvA", .address(c.advertiser, type: c.advertiserRandom ? .randomDevice : .publicDevice)))
                    f.append(Field("Connection Access Address", .integer(UInt64(c.accessAddress), .hex(bytes: 4))))
                    f.append(Field("CRC Init", .integer(UInt64(c.crcInit), .hex(bytes: 3))))
                    f.append(Field("Window Size", .integer(UInt64(c.windowSize), .scaled(bytes: 1, factor: 1.25, unit: "msec"))))
                    f.append(Field("Window Offset", .integer(UInt64(c.windowOffset), .scaled(bytes: 2, factor: 1.25, unit: "msec"))))
                    f.append(Field("Interval", .integer(UInt64(c.intervalUnits), .scaled(bytes: 2, factor: 1.25, unit: "msec"))))
                    f.append(Field("Latency", .integer(UInt64(c.latency), .decimal(bytes: 2))))
                    f.append(Field("Timeout", .integer(UInt64(c.timeoutUnits), .scaled(bytes: 2, factor: 10, unit: "msec"))))
                    f.append(Field("Channel Map", .text(channelList(c.channelMap))))
                    f.append(Field("Hop", .integer(UInt64(c.hop), .decimal(bytes: 1))))
                    f.append(Field("SCA", .integer(UInt64(c.sca), .decimal(bytes: 1))))
                case let .extended(e):
                    layer.name = extendedName(e, primary: p.radio.primaryChannel)
                    f.append(Field("AdvMode", .text(e.connectable ? "connectable" : e.scannable ? "scannable" : "non-connectable, non-scannable")))
                    if let a = e.advertiser { f.append(Field("AdvA", .address(a, type: e.advertiserRandom ? .randomDevice : .publicDevice))) }
                    if let t = e.target { f.append(Field("TargetA", .address(t, type: e.targetRandom ? .randomDevice : .publicDevice))) }
                    if let sid = e.setID, let did = e.dataID { f.append(Field("ADI", .text("SID \(sid), DID 0x\(Hex.pad(did, 3))"))) }
                    if let c = e.auxChannel, let phy = e.auxPHY {
                        f.append(Field("AuxPtr", .text("channel \(c), \(phyNames.name(UInt64(phy)) ?? "PHY \(phy)")")))
                    }
                    if e.hasSyncInfo { f.append(Field("SyncInfo", .text("present (periodic advertising)"))) }
                    if let t = e.txPower { f.append(Field("TxPower", .text("\(t) dBm"))) }
                    if e.dataLength > 0, var data = payload.getSlice(at: e.dataOffset - p.payloadOffset, count: e.dataLength) {
                        var structures: [[Field]] = []
                        while data.remaining > 0, let length = data.peekU8(), length > 0 {
                            _ = try data.u8("AD Length")
                            var s = try data.slice(Int(length), "AD Structure")
                            structures.append(ADDecoding.decode(&s))
                        }
                        if !structures.isEmpty { f.append(Field("Advertising Data", .list(structures))) }
                    }
                case .other:
                    if payload.remaining > 0 { f.append(Field("Payload", .bytes(Array(payload.remainingBytes)))) }
                }
            } catch { layer.error = error }
        } else {
            let llid = p.llid
            f.append(Field("LLID", .integer(UInt64(llid), .named(bytes: 1, llidNames))))
            f.append(Field("NESN", .integer(p.nesn ? 1 : 0, .decimal(bytes: 1))))
            f.append(Field("SN", .integer(p.sn ? 1 : 0, .decimal(bytes: 1))))
            f.append(Field("MD", .integer(p.moreData ? 1 : 0, .decimal(bytes: 1))))
            if let d = context.direction ?? (p.radio.direction != .unknown ? p.radio.direction : nil) {
                f.append(Field("Direction", .text(d.name + (context.direction != nil && p.radio.direction == .unknown ? " (inferred)" : ""))))
            }
            if context.retransmission { layer.notes.append("retransmission (same SN as the previous PDU in this direction): not fed twice") }
            if context.encrypted, p.payloadLength > 0 {
                layer.name = "Encrypted Data PDU"
                layer.code = "LLID \(llid)"
                f.append(Field("Encrypted Payload", .bytes(Array(payload.remainingBytes))))
            } else if llid == 3 {
                let opcode = payload.peekU8() ?? 0
                layer.name = controlNames.name(UInt64(opcode)).map { "Control PDU: " + $0 } ?? "Control PDU"
                layer.code = Hex.code(opcode, 2)
                _ = try? payload.u8("Opcode")
                if let entry = controlTable[UInt16(opcode)] {
                    let (fields, error, notes) = FieldDecoder.decodeMessage(entry.parameters, &payload)
                    f += fields
                    layer.error = error
                    layer.notes += notes
                } else if payload.remaining > 0 {
                    f.append(Field("CtrData", .bytes(Array(payload.remainingBytes))))
                }
            } else if p.payloadLength == 0 {
                layer.name = "Empty PDU"
            } else {
                layer.name = llid == 2 ? "Data PDU (L2CAP start)" : "Data PDU (L2CAP continuation)"
                layer.code = "LLID \(llid)"
            }
        }
        if let crc = p.crc {
            f.append(Field("CRC", .integer(UInt64(crc), .hex(bytes: 3))))
            f.append(Field("CRC Check", .integer(UInt64(crcCheck.rawValue), .named(bytes: 1, checkNames))))
        }
        if crcCheck == .invalid { layer.notes.append("CRC error: the packet was corrupted on air; its content is not trusted") }
        layer.fields = f
        return layer
    }

    /// The name of a PDU of type 7 (Core v5.4 Vol 6 Part B 2.3.4): ADV_EXT_IND on a primary channel; on
    /// a secondary channel AUX_ADV_IND (or AUX_SCAN_RSP: the same fields, after an AUX_SCAN_REQ) when
    /// it carries AdvA, AUX_CHAIN_IND when it does not (AdvA is absent only there and in anonymous
    /// advertising, Table 2.19).
    public static func extendedName(_ e: LLExtendedAdvertising, primary: Bool?) -> String {
        guard primary == false else { return "ADV_EXT_IND" }
        return e.advertiser != nil || e.auxChannel == nil && e.dataID == nil ? "AUX_ADV_IND" : "AUX_CHAIN_IND"
    }

    /// `0-36` or `0-8, 10-36 (36 channels)`.
    public static func channelList(_ map: UInt64) -> String {
        var ranges: [String] = []
        var i = 0
        while i < 37 {
            guard map & (1 << UInt64(i)) != 0 else { i += 1; continue }
            var j = i
            while j + 1 < 37, map & (1 << UInt64(j + 1)) != 0 { j += 1 }
            ranges.append(i == j ? "\(i)" : "\(i)-\(j)")
            i = j + 1
        }
        return ranges.joined(separator: ", ") + " (\(map.nonzeroBitCount) channels)"
    }

    /// LL Control PDU names, Core v5.4 Vol 6 Part B 2.4.2.
    public static let controlNames = NameTable(controlTable.entries.map { (UInt64($0.code), $0.name) })

    static let phys = FieldSpec.flags(1, NameTable([(1, "LE 1M"), (2, "LE 2M"), (4, "LE Coded")]))
    static let featureSet = FieldSpec.leFeatures
    static let connectionParameters: [Param] = [
        Param("Interval_Min", .connectionInterval), Param("Interval_Max", .connectionInterval), Param("Latency", .latency),
        Param("Timeout", .supervisionTimeout), Param("PreferredPeriodicity", .uint(1)), Param("ReferenceConnEventCount", .uint(2)),
        Param("Offset0", .uint(2)), Param("Offset1", .uint(2)), Param("Offset2", .uint(2)), Param("Offset3", .uint(2)),
        Param("Offset4", .uint(2)), Param("Offset5", .uint(2)),
    ]
    static let lengthParameters: [Param] = [
        Param("MaxRxOctets", .uint(2)), Param("MaxRxTime", .scaled(2, factor: 1, unit: "usec")),
        Param("MaxTxOctets", .uint(2)), Param("MaxTxTime", .scaled(2, factor: 1, unit: "usec")),
    ]

    /// One row per LL Control PDU, in opcode order (parameters after the opcode).
    public static let controlTable = MessageTable([
        MessageEntry(0x00, "LL_CONNECTION_UPDATE_IND", [
            Param("WinSize", .scaled(1, factor: 1.25, unit: "msec")), Param("WinOffset", .scaled(2, factor: 1.25, unit: "msec")),
            Param("Interval", .connectionInterval), Param("Latency", .latency), Param("Timeout", .supervisionTimeout), Param("Instant", .uint(2))]),
        MessageEntry(0x01, "LL_CHANNEL_MAP_IND", [Param("ChM", .hex(5)), Param("Instant", .uint(2))]),
        MessageEntry(0x02, "LL_TERMINATE_IND", [Param(.errorCode, "ErrorCode", .status)]),
        MessageEntry(0x03, "LL_ENC_REQ", [Param("Rand", .secret(8)), Param("EDIV", .hex(2)), Param("SKDc", .secret(8)), Param("IVc", .secret(4))]),
        MessageEntry(0x04, "LL_ENC_RSP", [Param("SKDp", .secret(8)), Param("IVp", .secret(4))]),
        MessageEntry(0x05, "LL_START_ENC_REQ"),
        MessageEntry(0x06, "LL_START_ENC_RSP"),
        MessageEntry(0x07, "LL_UNKNOWN_RSP", [Param("UnknownType", .hex(1))]),
        MessageEntry(0x08, "LL_FEATURE_REQ", [Param("FeatureSet", featureSet)]),
        MessageEntry(0x09, "LL_FEATURE_RSP", [Param("FeatureSet", featureSet)]),
        MessageEntry(0x0A, "LL_PAUSE_ENC_REQ"),
        MessageEntry(0x0B, "LL_PAUSE_ENC_RSP"),
        MessageEntry(0x0C, "LL_VERSION_IND", [Param("VersNr", .hex(1)), Param("CompId", .company), Param("SubVersNr", .hex(2))]),
        MessageEntry(0x0D, "LL_REJECT_IND", [Param(.errorCode, "ErrorCode", .status)]),
        MessageEntry(0x0E, "LL_PERIPHERAL_FEATURE_REQ", [Param("FeatureSet", featureSet)]),
        MessageEntry(0x0F, "LL_CONNECTION_PARAM_REQ", connectionParameters),
        MessageEntry(0x10, "LL_CONNECTION_PARAM_RSP", connectionParameters),
        MessageEntry(0x11, "LL_REJECT_EXT_IND", [Param("RejectOpcode", .hex(1)), Param(.errorCode, "ErrorCode", .status)]),
        MessageEntry(0x12, "LL_PING_REQ"),
        MessageEntry(0x13, "LL_PING_RSP"),
        MessageEntry(0x14, "LL_LENGTH_REQ", lengthParameters),
        MessageEntry(0x15, "LL_LENGTH_RSP", lengthParameters),
        MessageEntry(0x16, "LL_PHY_REQ", [Param("TX_PHYS", phys), Param("RX_PHYS", phys)]),
        MessageEntry(0x17, "LL_PHY_RSP", [Param("TX_PHYS", phys), Param("RX_PHYS", phys)]),
        MessageEntry(0x18, "LL_PHY_UPDATE_IND", [Param("PHY_C_TO_P", phys), Param("PHY_P_TO_C", phys), Param("Instant", .uint(2))]),
        MessageEntry(0x19, "LL_MIN_USED_CHANNELS_IND", [Param("PHYS", phys), Param("MinUsedChannels", .uint(1))]),
        MessageEntry(0x1A, "LL_CTE_REQ", [Param("CTETypeReq", .hex(1))]),
        MessageEntry(0x1B, "LL_CTE_RSP"),
        MessageEntry(0x1C, "LL_PERIODIC_SYNC_IND", [Param("Parameters", .rest)]),
        MessageEntry(0x1D, "LL_CLOCK_ACCURACY_REQ", [Param("SCA", .uint(1))]),
        MessageEntry(0x1E, "LL_CLOCK_ACCURACY_RSP", [Param("SCA", .uint(1))]),
        MessageEntry(0x1F, "LL_CIS_REQ", [Param("Parameters", .rest)]),
        MessageEntry(0x20, "LL_CIS_RSP", [Param("Parameters", .rest)]),
        MessageEntry(0x21, "LL_CIS_IND", [Param("Parameters", .rest)]),
        MessageEntry(0x22, "LL_CIS_TERMINATE_IND", [Param("CIG_ID", .uint(1)), Param("CIS_ID", .uint(1)), Param(.errorCode, "ErrorCode", .status)]),
        MessageEntry(0x23, "LL_POWER_CONTROL_REQ", [Param("PHY", .hex(1)), Param("Delta", .signed(1, unit: "dB")), Param("TxPower", .txPower)]),
        MessageEntry(0x24, "LL_POWER_CONTROL_RSP", [Param("MinMax", .hex(1)), Param("Delta", .signed(1, unit: "dB")), Param("TxPower", .txPower), Param("APR", .uint(1))]),
        MessageEntry(0x25, "LL_POWER_CHANGE_IND", [Param("PHY", .hex(1)), Param("MinMax", .hex(1)), Param("Delta", .signed(1, unit: "dB")), Param("TxPower", .txPower)]),
        // Connection subrating and channel classification (Core v5.4 Vol 6 Part B 2.4.2, 5.1.19–5.1.22), periodic
        // sync transfer with responses (v5.4); LL_FEATURE_EXT_REQ/RSP (feature pages beyond 0) came with Core 6.0.
        MessageEntry(0x26, "LL_SUBRATE_REQ", [Param("Parameters", .rest)]),
        MessageEntry(0x27, "LL_SUBRATE_IND", [Param("Parameters", .rest)]),
        MessageEntry(0x28, "LL_CHANNEL_REPORTING_IND", [Param("Enable", .uint(1)), Param("MinSpacing", .uint(1)), Param("MaxDelay", .uint(1))]),
        MessageEntry(0x29, "LL_CHANNEL_STATUS_IND", [Param("ChannelStatus", .rest)]),
        MessageEntry(0x2A, "LL_PERIODIC_SYNC_WR_IND", [Param("Parameters", .rest)]),
        MessageEntry(0x2B, "LL_FEATURE_EXT_REQ", [Param("Parameters", .rest)]),
        MessageEntry(0x2C, "LL_FEATURE_EXT_RSP", [Param("Parameters", .rest)]),
    ])
}
