import BLEBytes
import BLECapture
import BLEProtocol

/// Redaction of LE Link Layer air captures (pcap link types 251, 256, 272), Core v5.4 Vol 6 Part B.
/// What identifies a device or a connection on air, beyond what the L2CAP layers carry (SMP keys
/// and Identity Address, ATT values: found through the analysis as for HCI captures):
///
/// | where | replaced |
/// |---|---|
/// | every packet of a connection (or periodic train) | its access address (2.1.2), consistently |
/// | LE LL PHDR header | the Reference Access Address |
/// | ADV_IND, ADV_NONCONN_IND, ADV_SCAN_IND, SCAN_RSP | AdvA; names, addresses and keys in AdvData |
/// | ADV_DIRECT_IND, SCAN_REQ | AdvA, TargetA, ScanA |
/// | CONNECT_IND / AUX_CONNECT_REQ (2.3.3.1) | InitA, AdvA, the access address and CRCInit |
/// | extended advertising (2.3.4) | AdvA, TargetA, SyncInfo's access address and CRCInit; AdvData |
/// | LL_ENC_REQ, LL_ENC_RSP (2.4.2.4–5) | Rand, EDIV, SKD and IV zeroed (keys) |
///
/// The CRC of every changed packet is recomputed (`AirCopyFixer`), so a packet whose CRC was good
/// stays good (with the fake CRCInit) and a bad one stays bad.
extension RedactionScanner {
    func airRecords(_ frame: Frame) {
        let payload = frame.payload
        let linkType = UInt32(frame.rawType)
        guard let p = scannedAir else { return }
        // LINKTYPE_BLUETOOTH_LE_LL_WITH_PHDR: Reference Access Address at bytes 4–7 of the header.
        if linkType == LinkLayer.linkTypeLEWithPHDR, payload.count >= 8 {
            let reference = u32(payload, 4)
            if reference != 0, reference != LinkLayer.advertisingAccessAddress {
                link(at: 4, Self.le(UInt64(accessAddresses.fake(reference)), 4))
            }
        }
        guard p.accessAddress == LinkLayer.advertisingAccessAddress else {
            link(at: p.packetOffset, Self.le(UInt64(accessAddresses.fake(p.accessAddress)), 4))
            if let announced = announcedCRCInit[p.accessAddress] { crcInitDelta = announced ^ crcInits.fake(announced) }
            dataPDU(p, frame)
            return
        }
        guard p.radio.isData != true else { return }
        let at = p.payloadOffset, n = p.payloadLength
        switch p.advertisingType {
        case 0, 2, 4, 6:   // ADV_IND, ADV_NONCONN_IND, SCAN_RSP, ADV_SCAN_IND: AdvA, AdvData
            guard n >= 6 else { return }
            address(at: at, frame)
            advertisingData(at + 6 ..< at + n, frame)
        case 1, 3:         // ADV_DIRECT_IND: AdvA, TargetA; SCAN_REQ: ScanA, AdvA
            guard n >= 12 else { return }
            address(at: at, frame)
            address(at: at + 6, frame)
        case 5:            // CONNECT_IND: InitA, AdvA, AA, CRCInit, …
            guard n >= 34 else { return }
            address(at: at, frame)
            address(at: at + 6, frame)
            connection(accessAddressAt: at + 12, crcInitAt: at + 16, payload)
        case 7, 8:         // ADV_EXT_IND and AUX_* (common extended advertising payload), AUX_CONNECT_RSP
            extendedAdvertising(at, n, frame)
        default:
            break
        }
    }

    /// A new connection (or periodic advertising train): its access address and CRCInit are
    /// replaced, and the CRCInit is remembered for the CRC of its packets.
    private func connection(accessAddressAt a: Int, crcInitAt c: Int, _ payload: UnsafeRawBufferPointer) {
        let aa = u32(payload, a)
        let crcInit = u32(payload, c) & 0xFF_FFFF
        link(at: a, Self.le(UInt64(accessAddresses.fake(aa)), 4))
        link(at: c, Self.le(UInt64(crcInits.fake(crcInit)), 3))
        announcedCRCInit[aa] = crcInit
    }

    /// The Common Extended Advertising Payload Format (Vol 6 Part B 2.3.4): extended header length
    /// and AdvMode, flags, then the optional fields in order, then AdvData.
    private func extendedAdvertising(_ at: Int, _ n: Int, _ frame: Frame) {
        let p = frame.payload
        guard let payload = p.reader.getSlice(at: at, count: n), let layout = LLExtendedAdvertisingLayout.read(payload) else { return }
        if let a = layout.advA { address(at: at + a, frame) }
        if let t = layout.targetA { address(at: at + t, frame) }
        if let aa = layout.syncAccessAddress, let crc = layout.syncCRCInit { connection(accessAddressAt: at + aa, crcInitAt: at + crc, p) }
        advertisingData(at + layout.advData ..< at + n, frame)
    }

    private func address(at offset: Int, _ frame: Frame) {
        let range = ByteRange(offset: frame.payloadOffset + offset, count: 6)
        guard let bytes = read(range, base: frame.payloadOffset, map: nil) else { return }
        emit(range, bytes.withUnsafeBytes { addresses.fake(bytes: $0) }, .address, base: frame.payloadOffset, map: nil)
    }

    private func advertisingData(_ range: Range<Int>, _ frame: Frame) {
        guard !range.isEmpty, range.upperBound <= frame.payload.count else { return }
        var it = AD.StructureIterator(ByteReader(UnsafeRawBufferPointer(rebasing: frame.payload[range]), base: frame.payloadOffset + range.lowerBound))
        var count = 0
        while let s = it.next(), count < 128 {
            adStructure(s, base: frame.payloadOffset, map: nil)
            count += 1
        }
    }

    /// LL_ENC_REQ and LL_ENC_RSP in the clear (Vol 6 Part B 2.4.2.4–2.4.2.5): what, with the LTK,
    /// gives the session key. An encrypted PDU is 4 bytes longer (MIC) and is left alone.
    private func dataPDU(_ p: LLAirPacket, _ frame: Frame) {
        guard p.llid == 3, p.payloadLength >= 1 else { return }
        let opcode = frame.payload[p.payloadOffset]
        let keyBytes: Int? = switch (opcode, p.payloadLength) {
        case (0x03, 23): 22   // Rand, EDIV, SKDc, IVc
        case (0x04, 13): 12   // SKDp, IVp
        default: nil
        }
        guard let keyBytes else { return }
        add(RedactionEdit(offset: p.payloadOffset + 1, bytes: [UInt8](repeating: 0, count: keyBytes), what: .key))
    }

    /// Where application data starts in an air frame, for the sweep (known addresses in both byte
    /// orders, known names): AdvData, or the value of an ATT value PDU and its continuations.
    func airDataStart(_ frame: Frame) -> Int? {
        let b = frame.payload
        guard let p = scannedAir else { return nil }
        if p.accessAddress == LinkLayer.advertisingAccessAddress, p.radio.isData != true {
            switch p.advertisingType {
            case 0, 2, 4, 6: return p.payloadLength > 6 ? p.payloadOffset + 6 : nil
            case 7, 8:
                guard p.payloadLength >= 1 else { return nil }
                let start = p.payloadOffset + 1 + Int(b[p.payloadOffset] & 0x3F)
                return start < p.payloadOffset + p.payloadLength ? start : nil
            default: return nil
            }
        }
        let key = LinkDirection(adapter: frame.adapter, handle: UInt16(truncatingIfNeeded: p.accessAddress),
                                received: p.radio.direction == .peripheralToCentral)
        switch p.llid {
        case 1:
            return valuePDU.contains(key) && p.payloadLength > 0 ? p.payloadOffset : nil
        case 2:
            valuePDU.remove(key)
            let at = p.payloadOffset
            guard let start = Self.attValueStart(b.reader.getSlice(at: at, count: p.payloadLength)) else { return nil }
            valuePDU.insert(key)
            return at + start
        default:
            return nil
        }
    }

    /// A packet received with errors (the capture says its CRC failed) or too broken to parse: its
    /// fields cannot be trusted, so every 6-byte run equal to a known address (either byte order),
    /// every 4-byte run equal to a known access address and every known name is replaced wherever
    /// it lies after the access address (second pass).
    func sweepCorruptAir(_ frame: Frame) {
        let b = frame.payload
        let start: Int
        if let p = scannedAir {
            guard p.radio.crc == .invalid else { return }
            start = p.packetOffset + 4
        } else {
            start = 0
        }
        var i = start
        while i + 4 <= b.count {
            if i + 6 <= b.count, !overlapsEdit(i, 6) {
                var v: UInt64 = 0
                for k in 0..<6 { v |= UInt64(b[i + k]) << UInt64(8 * k) }
                let r = Self.reversed48(v)
                if addresses.isKnown(v) {
                    add(RedactionEdit(offset: i, bytes: Self.le(addresses.fake(v), 6), what: .address))
                    i += 6
                    continue
                } else if addresses.isKnown(r) {
                    add(RedactionEdit(offset: i, bytes: Self.le(addresses.fake(r), 6).reversed(), what: .address))
                    i += 6
                    continue
                }
            }
            let aa = u32(b, i)
            if !overlapsEdit(i, 4), let fake = accessAddresses.knownFake(aa) {
                link(at: i, Self.le(UInt64(fake), 4))
                i += 4
                continue
            }
            i += 1
        }
        guard !options.keepNames, names.count > 0 else { return }
        replaceNames(in: b, from: start)
    }

    private func link(at offset: Int, _ bytes: [UInt8]) {
        add(RedactionEdit(offset: offset, bytes: bytes, what: .link))
    }

    private func u32(_ b: UnsafeRawBufferPointer, _ at: Int) -> UInt32 {
        b.reader.getU32le(at: at) ?? 0
    }

    static func le(_ v: UInt64, _ count: Int) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: v >> UInt64(8 * $0)) }
    }
}

/// The last step for an air frame of the copy: the same bytes for a retransmission as for the PDU
/// it repeats, and a CRC that follows the changes.
///
/// The LE CRC (Vol 6 Part B 3.1.1) has no final XOR, so it is linear over GF(2) in the CRCInit and
/// the bytes together: CRC(i ⊕ i′, d ⊕ d′) = CRC(i, d) ⊕ CRC(i′, d′). The new CRC is therefore the
/// captured one XOR the CRC of the change (bytes changed, CRCInit real ⊕ fake). A packet whose CRC
/// matched keeps matching; one received with errors keeps exactly the same error syndrome, so
/// Wireshark, and our analysis, judge every packet as before.
final class AirCopyFixer {
    /// Per access address, the last few LL payloads that were changed (original → copy). The link
    /// layer repeats an unacknowledged PDU unchanged (Vol 6 Part B 4.5.9); the analysis reads only the
    /// first copy, so the repeats get that copy's edits here.
    private var recent: [UInt32: [(original: [UInt8], copy: [UInt8])]] = [:]
    static let recentPerLink = 4
    static let maxLinks = 4096

    /// - Parameter packet: `frame`'s LL packet (`RedactionScanner.airPacket`), nil when it does not parse.
    func fix(_ frame: Frame, _ packet: LLAirPacket?, edited: inout [UInt8], crcInitDelta: UInt32) {
        let original = frame.payload
        guard edited.count == original.count, let p = packet else { return }
        let payload = p.payloadOffset ..< p.payloadOffset + p.payloadLength
        if p.accessAddress != LinkLayer.advertisingAccessAddress, !payload.isEmpty {
            let before = Array(original[payload])
            if edited[payload].elementsEqual(before) {
                if let match = recent[p.accessAddress]?.last(where: { $0.original == before }) {
                    edited.replaceSubrange(payload, with: match.copy)
                }
            } else if recent.count < Self.maxLinks || recent[p.accessAddress] != nil {
                var list = recent[p.accessAddress] ?? []
                list.append((before, Array(edited[payload])))
                if list.count > Self.recentPerLink { list.removeFirst() }
                recent[p.accessAddress] = list
            }
        }
        guard let crc = p.crc else { return }
        // Header (2 bytes), CTEInfo when present, payload: the CRC's input.
        let cteInfo = !p.isAdvertising && p.ctePresent ? 1 : 0
        let start = p.payloadOffset - 2 - cteInfo
        guard start >= 0, payload.upperBound + 3 <= edited.count else { return }
        var change = [UInt8](repeating: 0, count: payload.upperBound - start)
        var changed = crcInitDelta != 0
        for i in start ..< payload.upperBound where original[i] != edited[i] {
            change[i - start] = original[i] ^ edited[i]
            changed = true
        }
        guard changed else { return }
        let fixed = crc ^ change.withUnsafeBytes { LinkLayer.crc($0, crcInit: crcInitDelta) }
        for k in 0..<3 { edited[payload.upperBound + k] = UInt8(truncatingIfNeeded: fixed >> UInt32(8 * k)) }
    }
}
