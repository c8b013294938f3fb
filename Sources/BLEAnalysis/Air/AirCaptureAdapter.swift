import BLEBytes
import BLECapture
import BLEProtocol

/// Turns an over-the-air LE capture (nRF Sniffer, Ubertooth, Sniffle, bsniffhub: pcap link types
/// 251, 256, 272) into the synthetic HCI traffic of the **central's host**, so the one analysis pass —
/// connections, timeline, GATT rebuild, detectors — works unchanged on air captures:
///
/// | on air | synthetic HCI (fed to `Analyzer.feed`) |
/// |---|---|
/// | ADV_IND, ADV_DIRECT_IND, ADV_NONCONN_IND, ADV_SCAN_IND, SCAN_RSP | LE Advertising Report (RSSI from the pseudo-header); one per advertising event (the copies on channels 37/38/39 within 10 ms are dropped) |
/// | CONNECT_IND | LE Connection Complete: role central, a synthetic handle per access address, peer = AdvA |
/// | data PDU, LLID 2 / 1 (not empty) | ACL Data, PB = first / continuing; central → peripheral is *sent*, peripheral → central *received*; each sent packet is acknowledged by a Number Of Completed Packets (the air shows no host buffers) |
/// | LL_CONNECTION_UPDATE_IND | LE Connection Update Complete |
/// | LL_LENGTH_RSP | LE Data Length Change (effective lengths from both sides' LL_LENGTH_REQ/RSP) |
/// | LL_PHY_UPDATE_IND | LE PHY Update Complete |
/// | LL_START_ENC_REQ | Encryption Change (on) |
/// | LL_TERMINATE_IND | HCI Disconnect (when the central sends it) + Disconnection Complete with the reason |
///
/// The connection is identified by its **access address**; `links` keeps per-link radio facts
/// (CRC errors, retransmissions, encrypted PDUs, missed events), which also go on the timeline.
///
/// **Direction of data PDUs.** The PHDR flags (PDU type 2/3) and the Nordic header give it. When
/// the header does not (Ubertooth: PHDR PDU type 0; link type 251), it is inferred from timing: the
/// central opens every connection event, so a packet that starts a new event — first on the link,
/// on another RF channel, or more than `eventGap` (3 ms, or half the connection interval if smaller)
/// after the previous packet — is the central's; within an event the two sides alternate (T_IFS
/// 150 µs apart). A packet the sniffer missed inside an event flips the rest of that event; the next
/// event re-synchronises.
///
/// **Duplicates.** A data PDU with the same SN and the same bytes as the previous PDU from the same
/// side is a retransmission (Vol 6 Part B 4.5.9: a new PDU toggles SN): counted, not fed twice.
/// Empty PDUs are counted, never fed. A packet whose CRC is invalid (as the header says, or as
/// computed from the CRCInit of CONNECT_IND / 0x555555 on advertising channels) is counted and dropped.
public final class AirCaptureAdapter {
    /// What one connection looked like on air.
    public struct Link: Sendable {
        public var accessAddress: UInt32
        /// The synthetic HCI connection handle standing for the access address.
        public var handle: UInt16
        public var connect: LLConnectIndication?
        public var connectFrame: Int?
        public var firstFrame: Int
        public var lastFrame: Int
        public var lastTime: Int64
        public var packets = 0
        public var dataPDUs = 0
        public var emptyPDUs = 0
        public var controlPDUs = 0
        public var crcErrors = 0
        public var retransmissions = 0
        /// PDUs with a payload the sniffer could not decrypt.
        public var encryptedPDUs = 0
        /// Connection events that must have happened between two seen events (gap / interval − 1).
        public var missedEvents = 0
        /// Events where the central was seen and the peripheral's answer was not.
        public var unansweredEvents = 0
        /// Packets whose direction came from the timing heuristic rather than the capture header.
        public var inferredDirections = 0
        public var encrypted = false
        public var terminated = false
        public var channelMap: UInt64?
        public var intervalUnits: UInt16 = 0
        var crcInit: UInt32?
        // Direction inference and duplicate detection.
        var lastDirection: LLDirection = .unknown
        var lastChannel: UInt8?
        var eventHasPeripheral = true
        /// Start of the last connection event the central opened (µs).
        var anchor: Int64?
        var misfits = 0
        /// Interval announced by LL_CONNECTION_UPDATE_IND, until the instant is seen.
        var pendingInterval: UInt16?
        /// Events whose central packet the sniffer missed (only the peripheral's answer was seen).
        public var eventsWithoutCentral = 0
        var lastSN: [Bool?] = [nil, nil]
        var lastBytes: [[UInt8]] = [[], []]
        var lengthRequest: [(rx: UInt16, tx: UInt16)?] = [nil, nil]
        /// L2CAP PDU being reassembled per side: first frame, bytes expected and seen, ATT opcode.
        var l2cap: [(frame: Int, expected: Int, have: Int, att: UInt8?)?] = [nil, nil]
        /// Frame of the last packet loss the sniffer showed (missed events, packets, fragments).
        var lastLossFrame = 0
        /// ATT transactions closed because the sniffer lost the response.
        public var lostResponses = 0
        var losses: Int { missedEvents + eventsWithoutCentral + unansweredEvents + crcErrors }
        var phy: (tx: UInt8, rx: UInt8) = (1, 1)
    }

    public private(set) var links: [Link] = []
    private var live: [UInt32: Int] = [:]
    /// Access addresses seen without a CONNECT_IND and without a checked CRC: a link is opened for
    /// one only after `sightingsBeforeLink` packets, so corrupted addresses do not become connections.
    private var sightings: [UInt32: Int] = [:]
    static let sightingsBeforeLink = 3
    static let maxLinks = 4096
    static let maxSightings = 4096
    public private(set) var advertisingPackets = 0
    public private(set) var advertisingCRCErrors = 0
    public private(set) var unreadablePackets = 0
    /// Copies of an advertising event on the other primary channels (dropped).
    public private(set) var advertisingDuplicates = 0
    /// Packets on an access address that never became a link (noise, or a connection whose
    /// CONNECT_IND the sniffer missed and that was seen too rarely).
    public private(set) var strayPackets = 0
    /// ATT PDUs seen again in retransmissions (not fed twice; tshark counts each copy), per opcode.
    public private(set) var retransmittedATTOpcodes = [Int](repeating: 0, count: 256)
    /// The direction of the last data-channel packet consumed (from the header or inferred), for display.
    public private(set) var lastDirection: LLDirection?
    /// True when the last data-channel packet was a retransmission, was not decrypted, or failed its CRC.
    public private(set) var lastContext = LinkLayerDisplay.Context()
    private var lastAdvertising: [UInt64: (time: Int64, type: UInt8)] = [:]
    static let advertisingEventWindow: Int64 = 10_000
    private var nextHandle: UInt16 = 1
    static let eventGap: Int64 = 3_000
    /// How far from the expected anchor (µs) an event's first packet may start and still be the central's.
    static let anchorTolerance: Int64 = 150

    public init() {}

    /// The link for a synthetic handle (for renderers: the access address of a connection).
    public func link(handle: UInt16) -> Link? { links.last { $0.handle == handle } }

    // MARK: Consuming air frames

    func consume(_ frame: Frame, into analyzer: Analyzer, status: inout FrameStatus) {
        let linkType = UInt32(frame.rawType)
        lastDirection = nil
        lastContext = LinkLayerDisplay.Context()
        let packet: LLAirPacket
        do { packet = try LLAirPacket.parse(linkType: linkType, frame.payload, base: frame.payloadOffset) } catch {
            unreadablePackets += 1
            if !frame.isCaptureTruncated { status = .decode(error) }
            return
        }
        if packet.isAdvertising {
            advertising(packet, frame, analyzer, &status)
        } else {
            data(packet, frame, analyzer, &status)
        }
    }

    /// Tells the link's connection the last frame where the sniffer lost packets (detectors do not call
    /// a request unanswered when its response may be among them).
    private func syncLoss(_ i: Int, _ session: SessionModel, adapter: UInt16) {
        guard links[i].lastLossFrame > 0, let c = session.live[LinkKey(adapter: adapter, handle: links[i].handle)] else { return }
        c.captureLossFrame = links[i].lastLossFrame
        if c.firstCaptureLossFrame == 0 { c.firstCaptureLossFrame = links[i].lastLossFrame }
    }

    func finish(_ analyzer: Analyzer) {
        for i in links.indices where !links[i].terminated { syncLoss(i, analyzer.session, adapter: 0) }
        for i in links.indices where !links[i].terminated {
            summarize(i, analyzer.session, time: links[i].lastTime, frame: links[i].lastFrame, ending: "no LL_TERMINATE_IND seen (link still open at capture end, lost by the sniffer, or ended encrypted)")
        }
    }

    private func advertising(_ p: LLAirPacket, _ frame: Frame, _ analyzer: Analyzer, _ status: inout FrameStatus) {
        advertisingPackets += 1
        var crc = p.radio.crc
        if crc == .unchecked { crc = p.computedCRC(frame.payload, crcInit: LinkLayer.advertisingCRCInit) }
        guard crc != .invalid else { advertisingCRCErrors += 1; return }
        let pdu: LLAdvertisingPDU
        do { pdu = try LLAdvertisingPDU.decode(p, frame.payload, base: frame.payloadOffset) } catch {
            status = .decode(error)
            return
        }
        switch pdu {
        case let .advertising(type, address, random, dataOffset, dataLength):
            let eventType: UInt8 = switch type { case 0: 0; case 6: 2; case 2: 3; default: 4 }
            guard newAdvertisingEvent(address, type: type, time: frame.timestamp) else { return }
            let data = Array(frame.payload[dataOffset ..< dataOffset + dataLength])
            report(eventType, address, random, data, p.radio.rssi, frame, analyzer, &status)
        case let .directed(address, random, _, _):
            guard newAdvertisingEvent(address, type: 1, time: frame.timestamp) else { return }
            report(1, address, random, [], p.radio.rssi, frame, analyzer, &status)
        case let .connect(c):
            connectIndication(c, frame, analyzer, &status)
        case .scanRequest, .other:
            break
        }
    }

    private func newAdvertisingEvent(_ address: BDAddr, type: UInt8, time: Int64) -> Bool {
        let key = address.value | UInt64(type) << 48
        if let last = lastAdvertising[key], time - last.time < Self.advertisingEventWindow, time >= last.time {
            advertisingDuplicates += 1
            return false
        }
        if lastAdvertising.count > 10_000 { lastAdvertising.removeAll(keepingCapacity: true) }
        lastAdvertising[key] = (time, type)
        return true
    }

    /// LE Advertising Report (Core v5.4 Vol 4 Part E 7.7.65.2), one report.
    private func report(_ eventType: UInt8, _ address: BDAddr, _ random: Bool, _ data: [UInt8], _ rssi: Int8?,
                        _ frame: Frame, _ analyzer: Analyzer, _ status: inout FrameStatus) {
        var e: [UInt8] = [0x3E, 0, 0x02, 1, eventType, random ? 1 : 0]
        e += Self.addressBytes(address)
        e.append(UInt8(truncatingIfNeeded: data.count))
        e += data
        e.append(UInt8(bitPattern: rssi ?? 127))
        e[1] = UInt8(truncatingIfNeeded: e.count - 2)
        analyzer.feedSynthetic(frame, .event, .received, e, status: &status)
    }

    private func connectIndication(_ c: LLConnectIndication, _ frame: Frame, _ analyzer: Analyzer, _ status: inout FrameStatus) {
        if let old = live[c.accessAddress] {
            // The same access address again: the old link ended unseen.
            summarize(old, analyzer.session, time: frame.timestamp, frame: frame.number, ending: "a new CONNECT_IND reuses its access address")
            live[c.accessAddress] = nil
        }
        // A new connection to a peripheral whose previous link never ended on air: that link was lost
        // (a supervision timeout the sniffer cannot show: no LL_TERMINATE_IND; Core v5.4 Vol 6 Part B 4.5.2).
        for (_, j) in live where !links[j].terminated && links[j].connect?.advertiser == c.advertiser {
            lose(j, analyzer, frame, why: "a new CONNECT_IND to the same peripheral at frame \(frame.number)", &status)
        }
        guard let i = openLink(c.accessAddress, frame) else { return }
        links[i].connect = c
        links[i].connectFrame = frame.number
        links[i].crcInit = c.crcInit
        links[i].channelMap = c.channelMap
        links[i].intervalUnits = c.intervalUnits
        // LE Connection Complete (7.7.65.1): the host is the central (the initiator).
        var e: [UInt8] = [0x3E, 19, 0x01, 0x00]
        e += Self.u16(links[i].handle)
        e += [0x00, c.advertiserRandom ? 1 : 0]
        e += Self.addressBytes(c.advertiser)
        e += Self.u16(c.intervalUnits) + Self.u16(c.latency) + Self.u16(c.timeoutUnits)
        e.append(c.sca <= 7 ? 7 - c.sca : 0)   // LL SCA 7 = 0–20 ppm; HCI Central_Clock_Accuracy 7 = 20 ppm
        analyzer.feedSynthetic(frame, .event, .received, e, status: &status)
        let aa = Hex.code(c.accessAddress, 8)
        note(i, analyzer.session, frame, .connected,
             "air: access address \(aa), initiator \(c.initiator), CRC init 0x\(Hex.pad(c.crcInit, 6)), hop \(c.hop), "
             + "channels \(LinkLayerDisplay.channelList(c.channelMap)), window \(Double(c.windowSize) * 1.25) ms at +\(Double(c.windowOffset) * 1.25) ms")
    }

    /// Ends link `j` as lost: a Disconnection Complete with Connection Timeout (0x08) at its last packet,
    /// marked as inferred so the report says how it is known.
    private func lose(_ j: Int, _ analyzer: Analyzer, _ frame: Frame, why: String, _ status: inout FrameStatus) {
        let handle = links[j].handle
        summarize(j, analyzer.session, time: frame.timestamp, frame: frame.number, ending: "lost: " + why)
        if let c = analyzer.session.live[LinkKey(adapter: frame.adapter, handle: handle)] {
            c.lossInferred = "no LL_TERMINATE_IND; " + why
        }
        var unused = FrameStatus.ok
        let e: [UInt8] = [0x05, 4, 0x00] + Self.u16(handle) + [0x08]
        analyzer.feedSynthetic(frame, .event, .received, e, status: &unused)
        links[j].terminated = true
        live[links[j].accessAddress] = nil
        _ = status
    }

    private func openLink(_ aa: UInt32, _ frame: Frame) -> Int? {
        guard links.count < Self.maxLinks else { return nil }
        let handle = nextHandle
        nextHandle = nextHandle >= 0x0EFF ? 1 : nextHandle + 1
        links.append(Link(accessAddress: aa, handle: handle, firstFrame: frame.number, lastFrame: frame.number, lastTime: frame.timestamp))
        live[aa] = links.count - 1
        sightings[aa] = nil
        return links.count - 1
    }

    // MARK: Data channel

    private func data(_ p: LLAirPacket, _ frame: Frame, _ analyzer: Analyzer, _ status: inout FrameStatus) {
        var index = live[p.accessAddress]
        if index == nil {
            // Mid-connection capture: no CONNECT_IND. Believe the address only when the capture checked
            // the CRC, or after a few sightings (a corrupted access address is noise).
            let seen = (sightings[p.accessAddress] ?? 0) + 1
            if p.radio.crc == .valid || seen >= Self.sightingsBeforeLink {
                index = openLink(p.accessAddress, frame)
                if let i = index {
                    note(i, analyzer.session, frame, .connected,
                         "air: access address 0x\(Hex.pad(p.accessAddress, 8)) seen with no CONNECT_IND in the capture (began mid-connection)")
                }
            } else {
                if sightings.count < Self.maxSightings { sightings[p.accessAddress] = seen }
                strayPackets += 1
                return
            }
        }
        guard let i = index else { strayPackets += 1; return }
        syncLoss(i, analyzer.session, adapter: frame.adapter)
        links[i].packets += 1
        var crc = p.radio.crc
        if crc == .unchecked, let crcInit = links[i].crcInit { crc = p.computedCRC(frame.payload, crcInit: crcInit) }
        if crc == .invalid {
            links[i].crcErrors += 1
            links[i].lastLossFrame = frame.number
            lastContext.crc = .invalid
            return   // neither direction nor content can be trusted
        }
        let lossesBefore = links[i].losses
        let direction = self.direction(p, i, frame.timestamp)
        lastDirection = direction
        lastContext = LinkLayerDisplay.Context(crc: crc, direction: direction, retransmission: false,
                                               encrypted: links[i].encrypted && !p.radio.decrypted)
        if links[i].losses != lossesBefore { links[i].lastLossFrame = frame.number }
        links[i].lastFrame = frame.number
        links[i].lastTime = frame.timestamp
        let side = direction == .peripheralToCentral ? 1 : 0
        // Retransmission: same SN and same bytes as the previous PDU from that side.
        let bytes = Array(frame.payload[p.payloadOffset ..< p.payloadOffset + p.payloadLength])
        if links[i].lastSN[side] == p.sn, links[i].lastBytes[side] == bytes, p.payloadLength > 0 || p.llid != 1 {
            links[i].retransmissions += 1
            lastContext.retransmission = true
            if p.llid == 2, bytes.count > 4, bytes[2] == 0x04, bytes[3] == 0 { retransmittedATTOpcodes[Int(bytes[4])] += 1 }
            return
        }
        links[i].lastSN[side] = p.sn
        links[i].lastBytes[side] = bytes
        if p.payloadLength == 0 {
            links[i].emptyPDUs += 1
            return
        }
        if links[i].encrypted, !p.radio.decrypted {
            links[i].encryptedPDUs += 1
            return
        }
        let sent = direction != .peripheralToCentral
        switch p.llid {
        case 1, 2:
            links[i].dataPDUs += 1
            trackL2CAP(i, side: side, start: p.llid == 2, bytes, frame, analyzer.session)
            // ACL Data (Vol 4 Part E 5.4.2): PB 0b10 first automatically flushable, 0b01 continuing.
            let pb: UInt16 = p.llid == 2 ? 0x2000 : 0x1000
            var acl = Self.u16(links[i].handle | pb) + Self.u16(UInt16(bytes.count))
            acl += bytes
            analyzer.feedSynthetic(frame, .aclData, sent ? .sent : .received, acl,
                                   payloadOffset: frame.payloadOffset + p.payloadOffset - 4, status: &status)
            if sent {
                // Number Of Completed Packets: the air shows the packet went out.
                var e: [UInt8] = [0x13, 5, 1]
                e += Self.u16(links[i].handle) + Self.u16(1)
                var ignored = FrameStatus.ok
                analyzer.feedSynthetic(frame, .event, .received, e, status: &ignored)
            }
        case 3:
            links[i].controlPDUs += 1
            var r = ByteReader(UnsafeRawBufferPointer(rebasing: frame.payload[p.payloadOffset ..< p.payloadOffset + p.payloadLength]),
                               base: frame.payloadOffset + p.payloadOffset)
            do {
                control(try LLControlPDU.decode(&r), p, i, direction, frame, analyzer, &status)
            } catch {
                status = .decode(error)
            }
        default:
            break
        }
    }

    /// Follows L2CAP reassembly per side to see what the sniffer lost. A lost response (a response
    /// whose continuation never came, or a request answered by nothing before the same client's next
    /// request, after the sniffer missed packets) would leave its request outstanding and make every
    /// later request look like an ATT protocol violation: such a transaction is closed as "answered,
    /// response not captured", with a timeline note. With no loss in between, a second request is
    /// left alone: that is a real violation.
    private func trackL2CAP(_ i: Int, side: Int, start: Bool, _ bytes: [UInt8], _ frame: Frame, _ session: SessionModel) {
        if start {
            if let pending = links[i].l2cap[side], pending.have < pending.expected {
                links[i].lastLossFrame = frame.number
                if let op = pending.att, ATTOpcode(op).kind == .response {
                    closeLostTransaction(i, requester: side == 0 ? .peer : .host, frame, session,
                                         why: "the sniffer lost part of the \(ATTOpcode(op).name) started in frame \(pending.frame) "
                                            + "(\(pending.have) of \(pending.expected) bytes)")
                }
            }
            guard bytes.count >= 4 else { links[i].l2cap[side] = nil; return }
            let length = Int(bytes[0]) | Int(bytes[1]) << 8
            let cid = UInt16(bytes[2]) | UInt16(bytes[3]) << 8
            let op: UInt8? = cid == L2CAP.ChannelID.att.rawValue && bytes.count > 4 ? bytes[4] : nil
            links[i].l2cap[side] = (frame.number, 4 + length, bytes.count, op)
            // A new request while this client's previous one is unanswered, after a loss: the response was lost.
            let requester: ATTBearer.Side = side == 0 ? .host : .peer
            let server = 1 - side
            if let op, ATTOpcode(op).kind == .request, let pending = links[i].l2cap[server], pending.have < pending.expected,
               let answer = pending.att, ATTOpcode(answer).kind == .response {
                // The server's answer is still incomplete and the client moves on: its end was lost.
                links[i].l2cap[server]?.att = nil
                links[i].lastLossFrame = frame.number
                closeLostTransaction(i, requester: requester, frame, session,
                                     why: "the sniffer lost part of the \(ATTOpcode(answer).name) started in frame \(pending.frame) "
                                        + "(\(pending.have) of \(pending.expected) bytes)")
            }
            if let op, ATTOpcode(op).kind == .request,
               let c = session.live[LinkKey(adapter: frame.adapter, handle: links[i].handle)],
               let outstanding = c.att.outstanding(from: requester), outstanding.frame < links[i].lastLossFrame {
                closeLostTransaction(i, requester: requester, frame, session,
                                     why: "no response to the \(outstanding.opcode.name) of frame \(outstanding.frame) was captured and the sniffer missed packets since")
            }
        } else if var pending = links[i].l2cap[side] {
            pending.have += bytes.count
            links[i].l2cap[side] = pending
        }
    }

    private func closeLostTransaction(_ i: Int, requester: ATTBearer.Side, _ frame: Frame, _ session: SessionModel, why: String) {
        guard let c = session.live[LinkKey(adapter: frame.adapter, handle: links[i].handle)], c.att.take(requester: requester) != nil else { return }
        links[i].lostResponses += 1
        if links[i].lostResponses <= 20 { c.note(frame.timestamp, frame.number, .attError, "air: " + why + ": taken as answered") }
    }

    /// The header's direction, else the timing heuristic (see the type's documentation).
    private func direction(_ p: LLAirPacket, _ i: Int, _ time: Int64) -> LLDirection {
        let given = p.radio.direction
        var link = links[i]
        defer { links[i] = link }
        let interval = Int64(link.intervalUnits) * 1250
        let gap = interval > 0 ? min(Self.eventGap, interval / 2) : Self.eventGap
        let newEvent = link.lastDirection == .unknown || time - link.lastTime > gap || time < link.lastTime
            || (p.radio.channel != nil && link.lastChannel != nil && p.radio.channel != link.lastChannel)
        var d = given
        if newEvent {
            if link.lastDirection != .unknown, !link.eventHasPeripheral { link.unansweredEvents += 1 }
            var central = true
            if interval > 0, let anchor = link.anchor, time > anchor {
                // Where the event should start: anchors are `interval` apart. Sniffers stamp the packet's
                // start or its end, so the tolerance grows with the packet's air time (8 µs a byte on 1M).
                var k = (time - anchor + interval / 2) / interval
                var offset = time - anchor - k * interval
                let tolerance = Self.anchorTolerance + 8 * Int64(p.payloadLength)
                if offset > tolerance, let next = link.pendingInterval {
                    // The connection update took effect: re-anchor on this event with the new interval.
                    link.intervalUnits = next
                    link.pendingInterval = nil
                    k = 1
                    offset = 0
                } else if offset > tolerance {
                    // Late for an anchor: the peripheral's answer to a central packet the sniffer missed —
                    // unless it keeps happening, which means the anchor drifted: re-anchor.
                    link.misfits += 1
                    central = link.misfits >= 2
                } else {
                    link.misfits = 0
                }
                if k > 1 { link.missedEvents += Int(min(k - 1, 1_000_000)) }
                if !central { link.anchor = anchor + k * interval }
            }
            if given != .unknown { central = given == .centralToPeripheral }
            if central {
                link.anchor = time
                link.misfits = 0
            } else {
                link.eventsWithoutCentral += 1
            }
            link.eventHasPeripheral = false
            if given == .unknown {
                link.inferredDirections += 1
                d = central ? .centralToPeripheral : .peripheralToCentral
            }
        } else if given == .unknown {
            link.inferredDirections += 1
            d = link.lastDirection == .centralToPeripheral ? .peripheralToCentral : .centralToPeripheral
        }
        if d == .peripheralToCentral { link.eventHasPeripheral = true }
        link.lastDirection = d
        link.lastChannel = p.radio.channel
        return d
    }

    private func control(_ pdu: LLControlPDU, _ p: LLAirPacket, _ i: Int, _ direction: LLDirection, _ frame: Frame,
                         _ analyzer: Analyzer, _ status: inout FrameStatus) {
        let handle = links[i].handle
        let from = direction == .peripheralToCentral ? "peripheral" : "central"
        let session = analyzer.session
        switch pdu {
        case let .connectionUpdate(_, _, interval, latency, timeout, instant):
            links[i].pendingInterval = interval
            // LE Connection Update Complete (7.7.65.3), reported when the procedure is announced.
            var e: [UInt8] = [0x3E, 10, 0x03, 0x00]
            e += Self.u16(handle) + Self.u16(interval) + Self.u16(latency) + Self.u16(timeout)
            analyzer.feedSynthetic(frame, .event, .received, e, status: &status)
            note(i, session, frame, .parameters, "air: LL_CONNECTION_UPDATE_IND from the \(from), at connection event \(instant)")
        case let .channelMap(map, instant):
            links[i].channelMap = map
            note(i, session, frame, .parameters, "air: channel map \(LinkLayerDisplay.channelList(map)) from event \(instant)")
        case let .terminate(reason):
            let hciReason = HCIStatus(rawValue: reason)
            if direction != .peripheralToCentral {
                // HCI Disconnect (7.1.6) so the story says the central's host ended it.
                let cmd: [UInt8] = [0x06, 0x04, 3] + Self.u16(handle) + [reason]
                analyzer.feedSynthetic(frame, .command, .sent, cmd, status: &status)
            }
            summarize(i, session, time: frame.timestamp, frame: frame.number, ending: "LL_TERMINATE_IND from the \(from): \(hciReason.name)")
            let e: [UInt8] = [0x05, 4, 0x00] + Self.u16(handle) + [reason]
            analyzer.feedSynthetic(frame, .event, .received, e, status: &status)
            links[i].terminated = true
            live[links[i].accessAddress] = nil
        case .encryptionRequest:
            note(i, session, frame, .security, "air: LL_ENC_REQ from the \(from) (encryption start)")
        case .startEncryptionRequest:
            links[i].encrypted = true
            let e: [UInt8] = [0x08, 4, 0x00] + Self.u16(handle) + [0x01]
            analyzer.feedSynthetic(frame, .event, .received, e, status: &status)
            note(i, session, frame, .security, "air: LL_START_ENC_REQ: the link is encrypted from here"
                 + (p.radio.decrypted ? " (the sniffer decrypts it)" : "; payloads the sniffer did not decrypt are counted, not decoded"))
        case .pauseEncryptionResponse:
            links[i].encrypted = false
        case let .featureRequest(f), let .featureResponse(f), let .peripheralFeatureRequest(f):
            let name = LinkLayerDisplay.controlNames.name(UInt64(frame.payload[p.payloadOffset])) ?? "LL features"
            note(i, session, frame, .signaling, "air: \(name) from the \(from): features 0x\(Hex.pad(f, 16))")
        case let .version(v, company, sub):
            note(i, session, frame, .signaling, "air: \(from) LL version 0x\(Hex.pad(v, 2)), company \(CompanyNames.table.name(UInt64(company)) ?? Hex.code(company, 4)), subversion 0x\(Hex.pad(sub, 4))")
        case let .reject(reason), let .rejectExtended(_, reason):
            note(i, session, frame, .signaling, "air: \(from) rejected an LL procedure: \(HCIStatus(rawValue: reason).name)")
        case let .connectionParameterRequest(a, b, latency, timeout):
            note(i, session, frame, .parameters, "air: \(from) asks for interval \(Double(a) * 1.25)–\(Double(b) * 1.25) ms, latency \(latency), timeout \(Int(timeout) * 10) ms")
        case let .lengthRequest(rx, _, tx, _), let .lengthResponse(rx, _, tx, _):
            let side = direction == .peripheralToCentral ? 1 : 0
            links[i].lengthRequest[side] = (rx, tx)
            if case .lengthResponse = pdu, let c = links[i].lengthRequest[0], let p = links[i].lengthRequest[1] {
                // LE Data Length Change (7.7.65.7): effective lengths seen from the central.
                let txOctets = min(c.tx, p.rx), rxOctets = min(p.tx, c.rx)
                var e: [UInt8] = [0x3E, 11, 0x07]
                e += Self.u16(handle) + Self.u16(txOctets) + Self.u16(Self.time(txOctets)) + Self.u16(rxOctets) + Self.u16(Self.time(rxOctets))
                analyzer.feedSynthetic(frame, .event, .received, e, status: &status)
            }
        case let .phyUpdate(cToP, pToC, instant):
            let tx = Self.hciPHY(cToP) ?? links[i].phy.tx, rx = Self.hciPHY(pToC) ?? links[i].phy.rx
            links[i].phy = (tx, rx)
            // LE PHY Update Complete (7.7.65.12).
            let e: [UInt8] = [0x3E, 6, 0x0C, 0x00] + Self.u16(handle) + [tx, rx]
            analyzer.feedSynthetic(frame, .event, .received, e, status: &status)
            note(i, session, frame, .phy, "air: LL_PHY_UPDATE_IND at connection event \(instant)")
        default:
            break
        }
    }

    /// The radio facts of a link, once, on its timeline.
    private func summarize(_ i: Int, _ session: SessionModel, time: Int64, frame: Int, ending: String) {
        let l = links[i]
        var parts = ["\(l.packets) packets", "\(l.dataPDUs) data PDUs", "\(l.controlPDUs) LL control", "\(l.emptyPDUs) empty"]
        if l.retransmissions > 0 { parts.append("\(l.retransmissions) retransmissions") }
        parts.append("\(l.crcErrors) CRC errors")
        if l.missedEvents > 0 || l.unansweredEvents > 0 || l.eventsWithoutCentral > 0 {
            parts.append("missed by the sniffer: \(l.missedEvents) whole connection events, \(l.eventsWithoutCentral) central packets, "
                         + "\(l.unansweredEvents) peripheral answers")
        }
        if l.lostResponses > 0 { parts.append("\(l.lostResponses) ATT responses not captured") }
        if l.encryptedPDUs > 0 { parts.append("\(l.encryptedPDUs) encrypted PDUs not decodable") }
        if l.inferredDirections > 0 { parts.append("direction inferred from timing for \(l.inferredDirections)") }
        if let c = session.live[LinkKey(adapter: 0, handle: l.handle)] {
            c.note(time, frame, .signaling, "air: " + parts.joined(separator: ", ") + "; " + ending)
        }
    }

    private func note(_ i: Int, _ session: SessionModel, _ frame: Frame, _ kind: TimelineEvent.Kind, _ text: String) {
        session.live[LinkKey(adapter: frame.adapter, handle: links[i].handle)]?.note(frame.timestamp, frame.number, kind, text)
    }

    static func u16(_ v: UInt16) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8)] }
    static func addressBytes(_ a: BDAddr) -> [UInt8] { (0..<6).map { UInt8(truncatingIfNeeded: a.value >> (8 * UInt64($0))) } }
    /// LL PHY bit (1M 0x01, 2M 0x02, Coded 0x04) → HCI PHY (1, 2, 3); nil for "no change".
    static func hciPHY(_ bits: UInt8) -> UInt8? { bits & 1 != 0 ? 1 : bits & 2 != 0 ? 2 : bits & 4 != 0 ? 3 : nil }
    /// Air time in µs of a PDU of `octets` payload on LE 1M (header, MIC-less): (octets + 14) × 8.
    static func time(_ octets: UInt16) -> UInt16 { UInt16(min(Int(octets) &+ 14, 8_000) * 8) }   // safe: bounded
}

extension Analyzer {
    /// Runs a synthetic HCI packet built from an air frame through the same checks and decoding as a
    /// captured one. The frame keeps the air frame's number and time, so findings cite real frames.
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

extension Analyzer {
    /// Display layers of an air frame with what the pass learned about it (inferred direction, CRC
    /// computed from the connection's CRCInit, retransmission, encryption). Call right after
    /// `consume(frame)`; `packets` can use it instead of the context-free `FrameLayers.decode`.
    public func airLayers(_ frame: Frame) -> [Layer] {
        LinkLayerDisplay.layers(linkType: UInt32(frame.rawType), frame.payload, base: frame.payloadOffset, context: air.lastContext)
    }
}
