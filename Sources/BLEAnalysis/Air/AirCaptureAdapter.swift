import BLEBytes
import BLECapture
import BLEProtocol

/// Turns an over-the-air LE capture (nRF Sniffer, Ubertooth, Sniffle, bsniffhub: pcap link types
/// 251, 256, 272) into what the **central's host** would have seen, so the one analysis pass —
/// connections, timeline, GATT rebuild, detectors — works unchanged on air captures:
///
/// | on air | given to the session |
/// |---|---|
/// | ADV_IND, ADV_DIRECT_IND, ADV_NONCONN_IND, ADV_SCAN_IND, SCAN_RSP | an LE Advertising Report (RSSI from the pseudo-header); one per advertising event (the copies on channels 37/38/39 within 10 ms are dropped) |
/// | AUX_ADV_IND (+ AUX_CHAIN_IND), AUX_SCAN_RSP, ADV_EXT_IND with AdvA | an LE Extended Advertising Report, the chain's data joined (`+Extended`) |
/// | CONNECT_IND | connection complete: role central, a handle per access address, peer = AdvA |
/// | data PDU, LLID 2 / 1 (not empty) | an ACL fragment, start / continuing, to the session's L2CAP reassembler; central → peripheral is *sent*, peripheral → central *received*; each sent packet is acknowledged by a Number Of Completed Packets (the air shows no host buffers) |
/// | LL_CONNECTION_UPDATE_IND | connection update complete |
/// | LL_LENGTH_RSP | data length change (effective lengths from both sides' LL_LENGTH_REQ/RSP) |
/// | LL_PHY_UPDATE_IND | PHY update complete |
/// | LL_START_ENC_REQ | encryption change (on) |
/// | LL_TERMINATE_IND | HCI Disconnect (when the central sends it) + disconnection complete with the reason |
///
/// Typed session events are given as values (`AirCaptureAdapter+Session.swift`); the few the session
/// reads from bytes (advertising reports, completed packets, ACL data) are laid out by BLEProtocol's
/// encoders from the same tables that decode them.
///
/// The files: this one (state, dispatch), `AirLink` (one connection on air and the direction
/// heuristic), `+Links` (opening, losing and summarising links), `+Advertising` (advertising channel
/// PDUs, CONNECT_IND), `+Data` (data channel PDUs → L2CAP, what the sniffer lost), `+Control` (LL
/// Control PDUs), `+Session` (what the session is given).
///
/// The connection is identified by its **access address**; `links` keeps per-link radio facts
/// (CRC errors, retransmissions, encrypted PDUs, missed events), which also go on the timeline.
///
/// **Direction of data PDUs.** The PHDR flags (PDU type 2/3) and the Nordic header give it. When
/// the header does not (Ubertooth: PHDR PDU type 0; link type 251), it is inferred from timing: the
/// central opens every connection event, so a packet that starts a new event — first on the link,
/// on another RF channel, or more than `Link.eventGap` (3 ms, or half the connection interval if
/// smaller) after the previous packet — is the central's; within an event the two sides alternate
/// (T_IFS 150 µs apart). A packet the sniffer missed inside an event flips the rest of that event;
/// the next event re-synchronises.
///
/// **Duplicates.** A data PDU with the same SN and the same bytes as the previous PDU from the same
/// side is a retransmission (Vol 6 Part B 4.5.9: a new PDU toggles SN): counted, not fed twice.
/// Empty PDUs are counted, never fed. A packet whose CRC is invalid (as the header says, or as
/// computed from the CRCInit of CONNECT_IND / 0x555555 on advertising channels) is counted and dropped.
public final class AirCaptureAdapter {
    public internal(set) var links: [Link] = []
    var live: [UInt32: Int] = [:]
    /// Access addresses seen without a CONNECT_IND and without a checked CRC: a link is opened for
    /// one only after `sightingsBeforeLink` packets, so corrupted addresses do not become connections.
    var sightings: [UInt32: Int] = [:]
    static let sightingsBeforeLink = 3
    static let maxLinks = 4096
    static let maxSightings = 4096
    public internal(set) var advertisingPackets = 0
    public internal(set) var advertisingCRCErrors = 0
    public internal(set) var unreadablePackets = 0
    /// Copies of an advertising event on the other primary channels (dropped).
    public internal(set) var advertisingDuplicates = 0
    /// Packets on an access address that never became a link (noise, or a connection whose
    /// CONNECT_IND the sniffer missed and that was seen too rarely).
    public internal(set) var strayPackets = 0
    /// ATT PDUs seen again in retransmissions (not fed twice; tshark counts each copy), per opcode.
    public internal(set) var retransmittedATTOpcodes = [Int](repeating: 0, count: 256)
    /// The direction of the last data-channel packet consumed (from the header or inferred), for display.
    public internal(set) var lastDirection: LLDirection?
    /// What the pass learned of the air frame consumed last (CRC check, direction, retransmission,
    /// encryption): handed on in its `AnalyzedFrame.airContext`.
    var lastContext = LinkLayerDisplay.Context()
    var lastAdvertising: [UInt64: (time: Int64, type: UInt8)] = [:]
    static let advertisingEventWindow: Int64 = 10_000
    /// Extended advertising PDUs (type 7), the reports made of them, and those that named no
    /// advertiser (an ADV_EXT_IND whose AUX_ADV_IND the sniffer did not follow, a chain whose start it missed).
    public internal(set) var extendedAdvertisingPackets = 0
    public internal(set) var extendedReports = 0
    public internal(set) var extendedWithoutAdvertiser = 0
    var pendingExtended: [PendingExtendedReport] = []
    /// The last advertising packet when it was a scannable legacy PDU (ADV_IND, ADV_SCAN_IND), and a SCAN_REQ
    /// heard right after one, waiting for the next packet to tell whether a SCAN_RSP answered it (`scanExchange`).
    var lastScannable: (advertiser: BDAddr, channel: UInt8?, time: Int64, frame: Int)?
    var pendingScanRequest: (advertiser: BDAddr, scanner: BDAddr, frame: Int, time: Int64)?
    /// A SCAN_REQ follows its advertising PDU, and the SCAN_RSP the SCAN_REQ, T_IFS (150 µs) after the end of
    /// the packet before (Core v5.4 Vol 6 Part B 4.4.2.3, 4.4.3): 2 ms covers the longest legacy packet on 1M
    /// (376 µs) and sniffers that time-stamp packet ends.
    static let scanResponseWindow: Int64 = 2_000
    /// The last legacy advertising PDU of each kind on each primary channel, by the sniffer's clock (`advertisingGap`).
    var lastOnChannel: [AdvertisingPDUKey: (time: UInt32, frame: Int)] = [:]
    struct AdvertisingPDUKey: Hashable {
        var address: BDAddr
        var type: UInt8
        var channel: UInt8
        var data: [UInt8]
    }
    /// advInterval's least value for legacy advertising (Core v5.4 Vol 6 Part B 4.4.2.2.1), µs.
    static let minimumAdvertisingGap: Int64 = 20_000
    /// The last AUX_SCAN_REQ (advertiser, time): the AUX_ADV_IND-shaped answer to it is an AUX_SCAN_RSP.
    var lastAuxScanRequest: (advertiser: BDAddr, time: Int64)?
    var nextHandle: UInt16 = 1
    /// The parse of the frame consumed last: handed on in its `AnalyzedFrame.air`, so display and
    /// redaction read each air frame once.
    private(set) var lastParse: Result<LLAirPacket, DecodeError>?

    public init() {}

    /// The link for a handle (for renderers: the access address of a connection).
    public func link(handle: UInt16) -> Link? { links.last { $0.handle == handle } }

    // MARK: Consuming air frames

    func consume(_ frame: Frame, into analyzer: Analyzer, status: inout FrameStatus) {
        lastCapture = (frame.number, frame.timestamp)
        lastDirection = nil
        lastContext = LinkLayerDisplay.Context()
        let result = Result { () throws(DecodeError) in
            try LLAirPacket.parse(linkType: UInt32(frame.rawType), frame.payload, base: frame.payloadOffset)
        }
        lastParse = result
        let packet: LLAirPacket
        switch result {
        case let .success(p): packet = p
        case let .failure(error):
            unreadablePackets += 1
            if !frame.isCaptureTruncated { status = .decode(error) }
            return
        }
        if packet.isAdvertising {
            advertising(packet, frame, analyzer, &status)
        } else {
            pendingScanRequest = nil
            lastScannable = nil
            data(packet, frame, analyzer, &status)
        }
    }

    /// A filtered export of an air capture (`FilteredExport.airDataOnly`): no advertising packet, and
    /// links carrying at least `filteredExportPDUs` data PDUs with neither an empty nor an LL control PDU.
    public var isFilteredExport: Bool {
        advertisingPackets == 0 && !links.isEmpty && links.allSatisfy { $0.keptOnlyData }
            && links.contains { $0.dataPDUs >= Link.filteredExportPDUs }
    }

    /// The capture's last frame (number, time), for how links end.
    var lastCapture: (frame: Int, time: Int64) = (0, 0)

    func finish(_ analyzer: Analyzer) {
        flushExtended(analyzer)
        for i in links.indices where !links[i].terminated { syncLoss(i, analyzer.session, adapter: 0) }
        for i in links.indices where !links[i].terminated {
            if let s = links[i].peripheralSilent {
                silent(i, s, analyzer)   // a lost link closes its runs of copies as lost
                for side in 0 ... 1 { closeBurst(i, side, analyzer.session, lost: false) }
                continue
            }
            for side in 0 ... 1 { closeBurst(i, side, analyzer.session, lost: false) }
            let after = lastCapture.time - links[i].lastTime
            let interval = Int64(links[i].intervalUnits) * 1250
            let ending: String
            if links[i].encrypted {
                ending = "no LL_TERMINATE_IND seen (it may have been sent encrypted)"
            } else if interval > 0, after > 6 * interval {
                // Neither side is heard while the sniffer goes on: the sniffer lost the link (it follows the
                // hops; a missed channel map or connection update loses it), nothing says the devices did.
                ending = "no packet of either side after frame \(links[i].lastFrame) while the capture went on "
                    + "\(Format.duration(after)) to frame \(lastCapture.frame): the sniffer lost the link (not a sign of the devices)"
            } else {
                ending = "no LL_TERMINATE_IND seen (link still open when the capture ended)"
            }
            summarize(i, analyzer.session, time: links[i].lastTime, frame: links[i].lastFrame, ending: ending)
        }
    }

    /// A peripheral that stopped answering: the central transmitted event after event, resending the same
    /// unacknowledged PDU and acknowledging nothing new. When the central then stopped (the capture went
    /// on), or the silence outlasted the supervision timeout, the link was lost (Core v5.4 Vol 6 Part B
    /// 4.5.2: no LL_TERMINATE_IND, Connection Timeout); otherwise the capture ended during the silence.
    func silent(_ i: Int, _ s: Link.Silence, _ analyzer: Analyzer) {
        let span = s.lastTime - s.firstTime
        let interval = Int64(links[i].intervalUnits) * 1250
        let timeout = Int64(analyzer.session.live[LinkKey(adapter: 0, handle: links[i].handle)]?.link.timeoutUnits ?? 0) * 10_000
        let stopped = interval > 0 && lastCapture.time - s.lastTime > 2 * interval
        let story = "the peripheral went silent after frame \(links[i].lastFromPeripheral.map(String.init) ?? "?"): the central transmitted in "
            + "\(s.events) connection events in a row (frames \(s.firstFrame)–\(s.lastFrame), \(Format.duration(span))), resending the same "
            + "unacknowledged PDU, and nothing came back"
        if stopped || (timeout > 0 && span >= timeout) {
            let end = Frame(number: s.lastFrame, timestamp: s.lastTime, direction: .unknown, kind: .airLE, adapter: 0, recordOffset: 0,
                            payloadOffset: 0, payload: UnsafeRawBufferPointer(start: nil, count: 0), originalLength: 0, rawType: 0)
            lose(i, analyzer, end, why: story + (stopped ? "; then the central stopped too (supervision timeout)" : ""))
        } else {
            summarize(i, analyzer.session, time: s.lastTime, frame: s.lastFrame, ending: story + "; the capture ends during the silence")
        }
    }
}
