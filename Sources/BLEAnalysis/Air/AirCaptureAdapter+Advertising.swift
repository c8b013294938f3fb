import BLEBytes
import BLECapture
import BLEProtocol

/// Advertising channel PDUs (Core v5.4 Vol 6 Part B 2.3): advertising reports, and CONNECT_IND opening a link.
extension AirCaptureAdapter {
    func advertising(_ p: LLAirPacket, _ frame: Frame, _ analyzer: Analyzer, _ status: inout FrameStatus) {
        advertisingPackets += 1
        var crc = p.radio.crc
        if crc == .unchecked { crc = p.computedCRC(frame.payload, crcInit: LinkLayer.advertisingCRCInit) }
        guard crc != .invalid else { advertisingCRCErrors += 1; pendingScanRequest = nil; lastScannable = nil; return }
        let pdu: LLAdvertisingPDU
        do { pdu = try LLAdvertisingPDU.decode(p, frame.payload, base: frame.payloadOffset) } catch {
            status = .decode(error)
            pendingScanRequest = nil
            lastScannable = nil
            return
        }
        scanExchange(pdu, p, frame, analyzer.session)
        switch pdu {
        case let .advertising(type, address, random, dataOffset, dataLength):
            if type != 4 { advertisingGap(type, address, p, frame, frame.payload[dataOffset ..< dataOffset + dataLength], analyzer.session) }
            guard newAdvertisingEvent(address, type: type, time: frame.timestamp) else { return }
            let data = Array(frame.payload[dataOffset ..< dataOffset + dataLength])
            advertisingReport(Self.reportEventType(type), address, random, data, p.radio.rssi, frame, analyzer, &status)
        case let .directed(address, random, _, _):
            guard newAdvertisingEvent(address, type: 1, time: frame.timestamp) else { return }
            advertisingReport(Self.reportEventType(1), address, random, [], p.radio.rssi, frame, analyzer, &status)
        case let .connect(c):
            connectIndication(c, frame, analyzer)
        case let .scanRequest(_, _, advertiser, _):
            if p.radio.primaryChannel == false { lastAuxScanRequest = (advertiser, frame.timestamp) }
        case let .extended(e):
            extendedAdvertising(e, p, frame, analyzer, &status)
        case .other:
            break
        }
    }

    /// Legacy scanning on a primary channel (Core v5.4 Vol 6 Part B 4.4.3): a SCAN_REQ the sniffer heard right
    /// after the advertiser's ADV_IND or ADV_SCAN_IND on the same channel (so it hears that advertiser there)
    /// is answered when the next packet is that advertiser's SCAN_RSP, T_IFS after the request, and unanswered
    /// when nothing came within `scanResponseWindow`. Another packet within the window (it may have hidden
    /// the answer), a bad CRC or a data packet next (the sniffer went elsewhere) decide nothing. Each decided request goes to the detectors
    /// (`adv.scan-response-missing`).
    func scanExchange(_ pdu: LLAdvertisingPDU, _ p: LLAirPacket, _ frame: Frame, _ session: SessionModel) {
        if let r = pendingScanRequest {
            pendingScanRequest = nil
            let inTime = frame.timestamp - r.time <= Self.scanResponseWindow
            var answered = false
            if case let .advertising(4, address, _, _, _) = pdu, address == r.advertiser { answered = inTime }
            // Another packet within the window may have hidden the answer from the sniffer: not decided.
            if answered || !inTime {
                session.emit(.advertising, .airScanRequest(advertiser: r.advertiser, scanner: r.scanner, frame: r.frame, time: r.time, answered: answered))
            }
        }
        // The scannable PDU before this one was an opportunity to scan: taken by the SCAN_REQ that follows it
        // in time, or by nobody when the next packet is anything else (`adv.scan-backoff-ignored`).
        if let last = lastScannable {
            var requester: BDAddr? = nil
            if case let .scanRequest(scanner, _, advertiser, _) = pdu, advertiser == last.advertiser, last.channel == p.radio.channel,
               frame.timestamp - last.time <= Self.scanResponseWindow { requester = scanner }
            session.emit(.advertising, .airScanOpportunity(advertiser: last.advertiser, requester: requester, frame: last.frame))
        }
        defer {
            switch pdu {
            case let .advertising(type, address, _, _, _) where type == 0 || type == 6:
                lastScannable = (address, p.radio.channel, frame.timestamp, frame.number)
            default:
                lastScannable = nil
            }
        }
        guard case let .scanRequest(scanner, _, advertiser, _) = pdu, p.radio.primaryChannel != false,
              let last = lastScannable, last.advertiser == advertiser, last.channel == p.radio.channel,
              frame.timestamp - last.time <= Self.scanResponseWindow else { return }
        pendingScanRequest = (advertiser, scanner, frame.number, frame.timestamp)
    }

    /// Legacy undirected advertising (ADV_IND, ADV_NONCONN_IND, ADV_SCAN_IND) by the sniffer's own clock: the
    /// same PDU (type, address, data) on the same primary channel again less than `minimumAdvertisingGap`
    /// after the last one goes to the detectors (`adv.interval-short`). Each advertising event uses a channel
    /// once, and events are advInterval (≥ 20 ms) + advDelay (0–10 ms) apart (Core v5.4 Vol 6 Part B
    /// 4.4.2.2.1). Only with the sniffer's clock: the capture's timestamps of nRF Sniffer files are the
    /// host's reception times, bursts a fraction of a millisecond apart.
    func advertisingGap(_ type: UInt8, _ address: BDAddr, _ p: LLAirPacket, _ frame: Frame, _ data: Slice<UnsafeRawBufferPointer>,
                        _ session: SessionModel) {
        guard let now = p.radio.snifferTime, let channel = p.radio.channel, p.radio.primaryChannel != false else { return }
        let key = AdvertisingPDUKey(address: address, type: type, channel: channel, data: Array(data))
        if let last = lastOnChannel[key] {
            let gap = Int64(now &- last.time)   // the clock wraps at 2^32 µs (71 min)
            if gap < Self.minimumAdvertisingGap {
                session.emit(.advertising, .airAdvertisingGap(advertiser: address, channel: channel, previous: last.frame, frame: frame.number,
                                                              time: frame.timestamp, gap: gap))
            }
        }
        if lastOnChannel.count > 10_000 { lastOnChannel.removeAll(keepingCapacity: true) }
        lastOnChannel[key] = (now, frame.number)
    }

    /// The legacy advertising report's Event_Type (Core v5.4 Vol 4 Part E 7.7.65.2) of an advertising
    /// PDU type (Vol 6 Part B 2.3): ADV_IND 0, ADV_DIRECT_IND 1, ADV_SCAN_IND 2, ADV_NONCONN_IND 3, SCAN_RSP 4.
    static func reportEventType(_ pduType: UInt8) -> UInt8 {
        switch pduType { case 0: 0; case 1: 1; case 6: 2; case 2: 3; default: 4 }
    }

    /// False for a copy of the advertising event last seen from `address` (the same PDU on another
    /// primary channel within `advertisingEventWindow`).
    func newAdvertisingEvent(_ address: BDAddr, type: UInt8, time: Int64) -> Bool {
        let key = address.value | UInt64(type) << 48
        if let last = lastAdvertising[key], time - last.time < Self.advertisingEventWindow, time >= last.time {
            advertisingDuplicates += 1
            return false
        }
        if lastAdvertising.count > 10_000 { lastAdvertising.removeAll(keepingCapacity: true) }
        lastAdvertising[key] = (time, type)
        return true
    }

    private func connectIndication(_ c: LLConnectIndication, _ frame: Frame, _ analyzer: Analyzer) {
        if let old = live[c.accessAddress] {
            // The same access address again: the old link ended unseen.
            summarize(old, analyzer.session, time: frame.timestamp, frame: frame.number, ending: "a new CONNECT_IND reuses its access address")
            live[c.accessAddress] = nil
        }
        // A new connection to a peripheral whose previous link never ended on air: that link was lost
        // (a supervision timeout the sniffer cannot show: no LL_TERMINATE_IND; Core v5.4 Vol 6 Part B 4.5.2).
        for (_, j) in live where !links[j].terminated && links[j].connect?.advertiser == c.advertiser {
            lose(j, analyzer, frame, why: "a new CONNECT_IND to the same peripheral at frame \(frame.number)")
        }
        guard let i = openLink(c.accessAddress, frame) else { return }
        links[i].connect = c
        links[i].connectFrame = frame.number
        links[i].crcInit = c.crcInit
        links[i].channelMap = c.channelMap
        links[i].intervalUnits = c.intervalUnits
        connected(c, handle: links[i].handle, frame, analyzer)
        if let conn = analyzer.session.live[LinkKey(adapter: frame.adapter, handle: links[i].handle)] {
            analyzer.session.emit(.link, .airChannelMap(conn, frame: frame.number, time: frame.timestamp, map: c.channelMap, indication: false))
        }
        let aa = Hex.code(c.accessAddress, 8)
        note(i, analyzer.session, frame, .connected,
             .air("access address \(aa), initiator \(c.initiator), CRC init 0x\(Hex.pad(c.crcInit, 6)), hop \(c.hop), "
             + "channels \(LinkLayerDisplay.channelList(c.channelMap)), window \(Double(c.windowSize) * 1.25) ms at +\(Double(c.windowOffset) * 1.25) ms"))
    }
}
