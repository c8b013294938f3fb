import BLEBytes
import BLECapture
import BLEProtocol

/// What the session is given for an air frame, as the central's host would have been told it
/// (Core v5.4 Vol 4 Part E 7.7). Events the session takes as values go in typed; the advertising
/// report, Number Of Completed Packets and ACL data, which it reads from bytes, are laid out by
/// BLEProtocol's encoders from the rows that decode them. Each keeps the air frame's number and time,
/// so findings cite real frames.
extension AirCaptureAdapter {
    /// LE Connection Complete (7.7.65.1): the host is the central (the initiator).
    func connected(_ c: LLConnectIndication, handle: UInt16, _ frame: Frame, _ analyzer: Analyzer) {
        let cc = ConnectionComplete(status: .success, handle: handle, role: 0,
                                    peerAddressType: LEAddressType(rawValue: c.advertiserRandom ? 1 : 0), peerAddress: c.advertiser,
                                    intervalUnits: c.intervalUnits, latency: c.latency, timeoutUnits: c.timeoutUnits, isLE: true)
        var unused = FrameStatus.ok
        analyzer.session.event(.connectionComplete(cc), frame: frame, status: &unused)
    }

    /// Disconnection Complete (7.7.5).
    func disconnected(_ handle: UInt16, reason: HCIStatus, _ frame: Frame, _ analyzer: Analyzer, _ status: inout FrameStatus) {
        analyzer.session.event(.disconnectionComplete(status: .success, handle: handle, reason: reason), frame: frame, status: &status)
    }

    /// HCI Disconnect (7.1.6): the central's host ends the link.
    func hostDisconnect(_ handle: UInt16, reason: HCIStatus, _ frame: Frame, _ analyzer: Analyzer) {
        analyzer.session.command(.disconnect(handle: handle, reason: reason), frame: frame)
    }

    /// LE Connection Update Complete (7.7.65.3).
    func parametersUpdated(_ handle: UInt16, interval: UInt16, latency: UInt16, timeout: UInt16, _ frame: Frame,
                           _ analyzer: Analyzer, _ status: inout FrameStatus) {
        analyzer.session.event(.connectionUpdateComplete(status: .success, handle: handle, intervalUnits: interval, latency: latency,
                                                         timeoutUnits: timeout), frame: frame, status: &status)
    }

    /// Encryption Change (7.7.8), on.
    func encryptionStarted(_ handle: UInt16, _ frame: Frame, _ analyzer: Analyzer, _ status: inout FrameStatus) {
        analyzer.session.event(.encryptionChange(status: .success, handle: handle, enabled: true, keySize: nil, mode: 0x01), frame: frame, status: &status)
    }

    /// LE Data Length Change (7.7.65.7), with the air times of those lengths.
    func dataLengthChanged(_ handle: UInt16, tx: UInt16, rx: UInt16, _ frame: Frame, _ analyzer: Analyzer, _ status: inout FrameStatus) {
        analyzer.session.event(.dataLengthChange(handle: handle, maxTxOctets: tx, maxTxTime: Self.time(tx), maxRxOctets: rx,
                                                 maxRxTime: Self.time(rx)), frame: frame, status: &status)
    }

    /// LE PHY Update Complete (7.7.65.12).
    func phyUpdated(_ handle: UInt16, tx: UInt8, rx: UInt8, _ frame: Frame, _ analyzer: Analyzer, _ status: inout FrameStatus) {
        analyzer.session.event(.phyUpdateComplete(status: .success, handle: handle, txPHY: tx, rxPHY: rx), frame: frame, status: &status)
    }

    /// LE Advertising Report (7.7.65.2), one report; RSSI 127 when the sniffer gives none.
    func advertisingReport(_ eventType: UInt8, _ address: BDAddr, _ random: Bool, _ data: [UInt8], _ rssi: Int8?,
                           _ frame: Frame, _ analyzer: Analyzer, _ status: inout FrameStatus) {
        let report: [ParamKey: HCIEventEncoding.Value] = [
            HCIKey.eventType: .int(UInt64(eventType)), HCIKey.addressType: .int(random ? 1 : 0), HCIKey.address: .address(address),
            HCIKey.data: .lengthPrefixed(data), HCIKey.rssi: .int(UInt64(UInt8(bitPattern: rssi ?? 127))),
        ]
        guard let e = try? HCIEventEncoding.leMeta(LESubevent.advertisingReport, [HCIKey.numReports: .list([report])]) else { return }
        analyzer.feedSynthetic(frame, .event, .received, e, status: &status)
    }

    /// An LL Data PDU's payload as an ACL data packet (Vol 4 Part E 5.4.2) on the link's handle: Packet
    /// Boundary "first automatically flushable" for LLID 2, "continuing" for LLID 1. Its bytes are those
    /// of the air frame (`at`: their file offset), so offsets in errors and redaction are the frame's.
    /// A sent packet is then completed (the air shows it went out; no host buffers to watch).
    func aclData(_ handle: UInt16, start: Bool, _ bytes: [UInt8], at offset: Int, sent: Bool,
                 _ frame: Frame, _ analyzer: Analyzer, _ status: inout FrameStatus) {
        let acl = L2CAPEncoding.aclPacket(handle: handle, boundary: start ? ACLHeader.firstFlushable : ACLHeader.continuing, bytes)
        analyzer.feedSynthetic(frame, .aclData, sent ? .sent : .received, acl, payloadOffset: offset - ACLHeader.size, status: &status)
        guard sent else { return }
        // Number Of Completed Packets (7.7.19), one packet.
        let pair: [ParamKey: HCIEventEncoding.Value] = [HCIKey.connectionHandle: .int(UInt64(handle)), HCIKey.numCompletedPackets: .int(1)]
        guard let e = try? HCIEventEncoding.event(HCIEventCode.numberOfCompletedPackets, [HCIKey.numHandles: .list([pair])]) else { return }
        var ignored = FrameStatus.ok
        analyzer.feedSynthetic(frame, .event, .received, e, status: &ignored)
    }

    /// Air time in µs of a PDU of `octets` payload on LE 1M (header, MIC-less): (octets + 14) × 8.
    static func time(_ octets: UInt16) -> UInt16 { UInt16(min(Int(octets) &+ 14, 8_000) * 8) }   // safe: bounded
}

extension Analyzer {
    /// Runs an HCI packet made from an air frame through the same checks and decoding as a captured
    /// one. The frame keeps the air frame's number and time, so findings cite real frames.
    func feedSynthetic(_ air: Frame, _ kind: FrameKind, _ direction: Direction, _ bytes: [UInt8],
                       payloadOffset: Int? = nil, status: inout FrameStatus) {
        guard let type = kind.hciPacketType else { return }
        bytes.withUnsafeBytes { buffer in
            let frame = Frame(number: air.number, timestamp: air.timestamp, direction: direction, kind: kind, adapter: air.adapter,
                              recordOffset: air.recordOffset, payloadOffset: payloadOffset ?? air.payloadOffset, payload: buffer,
                              originalLength: buffer.count, rawType: 0)
            if let error = HCIValidation.check(type, buffer, base: frame.payloadOffset, captureTruncated: false) {
                status = .decode(error)
                return
            }
            feed(type, frame, &status)
        }
    }
}
