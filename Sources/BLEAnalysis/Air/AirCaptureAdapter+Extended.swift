import BLEBytes
import BLECapture
import BLEProtocol

/// Extended advertising on air (Core v5.4 Vol 6 Part B 2.3.4, 4.4.2.2): ADV_EXT_IND on the primary
/// channels points (AuxPtr) to an AUX_ADV_IND on a secondary channel, on LE 1M, 2M or Coded, which
/// carries AdvA and AdvData; AUX_CHAIN_INDs (same ADI, no AdvA) carry the rest of the data; an
/// AUX_SCAN_RSP answers an AUX_SCAN_REQ. The session is given what a scanning controller reports: one
/// LE Extended Advertising Report (Vol 4 Part E 7.7.65.13) per advertising event, with the chain's
/// data joined. A chain the sniffer did not follow to its end is reported with Data_Status
/// "incomplete, truncated" (2). An ADV_EXT_IND without AdvA names no advertiser: its data is in the
/// AUX_ADV_IND, which a sniffer that stays on the primary channels never records (counted, no report).
extension AirCaptureAdapter {
    /// A report being completed by AUX_CHAIN_INDs.
    struct PendingExtendedReport {
        var key: UInt32
        var address: BDAddr
        var random: Bool
        var eventType: UInt16
        var primaryPHY: UInt8
        var secondaryPHY: UInt8
        var sid: UInt8
        var txPower: Int8?
        var rssi: Int8?
        var data: [UInt8]
        var frame: Int
        var time: Int64
        var lastTime: Int64
        var adapter: UInt16
        var recordOffset: Int
        var payloadOffset: Int
    }

    /// A chain PDU follows its predecessor by the AuxPtr's offset, at most 2.4576 s (13 bits × 300 µs);
    /// in practice a few ms. Beyond this the chain is taken as cut.
    static let chainWindow: Int64 = 2_500_000
    /// An extended report carries at most 229 data octets (the event's 255-octet limit, 7.7.65.13).
    static let extendedReportDataMax = 229

    func extendedAdvertising(_ e: LLExtendedAdvertising, _ p: LLAirPacket, _ frame: Frame, _ analyzer: Analyzer,
                             _ status: inout FrameStatus) {
        extendedAdvertisingPackets += 1
        let primary = p.radio.primaryChannel != false
        let key = e.setID.map { UInt32($0) << 12 | UInt32(e.dataID ?? 0) } ?? 0xFFFF
        let data = Array(frame.payload[e.dataOffset ..< e.dataOffset + e.dataLength])
        guard let address = e.advertiser else {
            // AUX_CHAIN_IND: the rest of the data of the report pending for its ADI.
            guard !primary, let i = pendingExtended.firstIndex(where: { $0.key == key && frame.timestamp - $0.lastTime <= Self.chainWindow }) else {
                extendedWithoutAdvertiser += 1
                return
            }
            pendingExtended[i].data += data
            pendingExtended[i].lastTime = frame.timestamp
            if e.auxChannel == nil { emitExtended(pendingExtended.remove(at: i), complete: true, analyzer) }
            return
        }
        if primary, !newAdvertisingEvent(address, type: 7, time: frame.timestamp) { return }
        // A PDU from the same set while its previous chain is still open: that chain was cut.
        if let i = pendingExtended.firstIndex(where: { $0.key == key && $0.address == address }) {
            emitExtended(pendingExtended.remove(at: i), complete: false, analyzer)
        }
        let scanResponse = !primary && lastAuxScanRequest.map { $0.advertiser == address && frame.timestamp - $0.time < 2_000 } == true
        var eventType: UInt16 = (e.connectable ? 0x01 : 0) | (e.scannable ? 0x02 : 0) | (e.target != nil ? 0x04 : 0)
        if scanResponse { eventType |= 0x02 | 0x08 }
        // Primary_PHY: 1 LE 1M, 3 LE Coded; Secondary_PHY: 0 none, 1 LE 1M, 2 LE 2M, 3 LE Coded (7.7.65.13).
        let phy = p.radio.phy.map { $0 + 1 } ?? 1
        let report = PendingExtendedReport(
            key: key, address: address, random: e.advertiserRandom, eventType: eventType,
            primaryPHY: phy == 3 ? 3 : 1, secondaryPHY: primary ? 0 : phy,
            sid: e.setID ?? 0xFF, txPower: e.txPower, rssi: p.radio.rssi, data: data, frame: frame.number, time: frame.timestamp,
            lastTime: frame.timestamp, adapter: frame.adapter, recordOffset: frame.recordOffset, payloadOffset: frame.payloadOffset)
        if !primary, e.auxChannel != nil {
            if pendingExtended.count >= 64 { emitExtended(pendingExtended.removeFirst(), complete: false, analyzer) }
            pendingExtended.append(report)
        } else if primary && e.auxChannel != nil {
            return   // its AUX_ADV_IND carries the data and is reported
        } else {
            emitExtended(report, complete: true, analyzer)
        }
    }

    /// Reports the chains the capture ended in (truncated).
    func flushExtended(_ analyzer: Analyzer) {
        for r in pendingExtended { emitExtended(r, complete: false, analyzer) }
        pendingExtended.removeAll()
    }

    /// LE Extended Advertising Report (7.7.65.13), one report, stamped with the frame that began it.
    private func emitExtended(_ r: PendingExtendedReport, complete: Bool, _ analyzer: Analyzer) {
        extendedReports += 1
        let cut = !complete || r.data.count > Self.extendedReportDataMax
        let eventType = r.eventType | (cut ? 2 << 5 : 0)   // Data_Status 2: incomplete, truncated
        let report: [ParamKey: HCIEventEncoding.Value] = [
            HCIKey.eventType: .int(UInt64(eventType)), HCIKey.addressType: .int(r.random ? 1 : 0),
            HCIKey.address: .address(r.address), HCIKey.primaryPHY: .int(UInt64(r.primaryPHY)),
            HCIKey.secondaryPHY: .int(UInt64(r.secondaryPHY)), HCIKey.advertisingSID: .int(UInt64(r.sid)),
            HCIKey.txPower: .int(UInt64(UInt8(bitPattern: r.txPower ?? 127))), HCIKey.rssi: .int(UInt64(UInt8(bitPattern: r.rssi ?? 127))),
            HCIKey.periodicAdvertisingInterval: .int(0), HCIKey.directAddressType: .int(0),
            HCIKey.directAddress: .address(BDAddr(0)), HCIKey.data: .lengthPrefixed(Array(r.data.prefix(Self.extendedReportDataMax))),
        ]
        guard let bytes = try? HCIEventEncoding.leMeta(LESubevent.extendedAdvertisingReport, [HCIKey.numReports: .list([report])]) else { return }
        let frame = Frame(number: r.frame, timestamp: r.time, direction: .unknown, kind: .airLE, adapter: r.adapter, recordOffset: r.recordOffset,
                          payloadOffset: r.payloadOffset, payload: UnsafeRawBufferPointer(start: nil, count: 0), originalLength: 0, rawType: 0)
        var ignored = FrameStatus.ok
        analyzer.feedSynthetic(frame, .event, .received, bytes, status: &ignored)
    }
}
