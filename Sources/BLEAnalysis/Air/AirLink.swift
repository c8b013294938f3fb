import BLEProtocol

/// One side of an air link sending the same PDU (same SN, same bytes) again and again: the peer did not
/// acknowledge it (Core v5.4 Vol 6 Part B 4.5.9). `first` is the original PDU, `last` its last copy.
public struct AirRetransmissionBurst: Sendable {
    public var byPeripheral: Bool
    /// Copies after the original.
    public var copies: Int
    public var first: Int, firstTime: Int64
    public var last: Int, lastTime: Int64
    /// The link was lost before this side sent a new PDU.
    public var lost = false
    /// Shortest run told to the detectors: one or two copies are ordinary on a busy band.
    static let reported = 3
}

/// A data PDU the sniffer's header marks as sent in the clear, or whose MIC it found wrong while it decrypted
/// the link's other PDUs, after both sides encrypted (their first encrypted PDUs after LL_START_ENC_REQ:
/// the LL_START_ENC_RSPs, Core v5.4 Vol 6 Part B 5.1.3.1). `started`: those two frames, central's first.
public struct AirUnencryptedPDU: Sendable {
    public var frame: Int, time: Int64
    public var byPeripheral: Bool
    /// The sniffer decrypted the link's other PDUs and this one's MIC failed (rather than "not encrypted").
    public var micFailed: Bool
    public var started: (central: Int, peripheral: Int)
}

extension AirCaptureAdapter {
    /// What one connection looked like on air, tracked by its access address.
    public struct Link: Sendable {
        public var accessAddress: UInt32
        /// The HCI connection handle standing for the access address in the session.
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
        /// Of those, PDUs whose MIC the sniffer checked and found wrong (its decryption failed).
        public var micFailures = 0
        /// PDUs after LL_START_ENC_REQ decoded as plain because the header says so (decrypted by the
        /// sniffer, or not encrypted).
        public var plainAfterEncryption = 0
        /// Connection events that must have happened between two seen events (gap / interval − 1).
        public var missedEvents = 0
        /// Events where the central was seen and the peripheral's answer was not.
        public var unansweredEvents = 0
        /// Packets whose direction came from the timing heuristic rather than the capture header.
        public var inferredDirections = 0
        /// Packets whose header named the same sender as the packet just before it, T_IFS after it with no
        /// room for a packet between: the header is wrong (the two sides alternate within an event), the
        /// direction is the other one.
        public var correctedDirections = 0
        public var encrypted = false
        /// Per side: the frame of its first PDU the header marks encrypted after LL_START_ENC_REQ (its LL_START_ENC_RSP).
        var encryptedFrom: [Int?] = [nil, nil]
        /// The sniffer checked a MIC and found it right on this link (it holds the key).
        var micChecked = false
        public var terminated = false
        public var channelMap: UInt64?
        public var intervalUnits: UInt16 = 0
        var crcInit: UInt32?
        // Direction inference and duplicate detection.
        var lastDirection: LLDirection = .unknown
        var lastChannel: UInt8?
        /// Air time (µs) of the last packet, nil when its PHY is not known to be LE 1M or 2M.
        var lastAirTime: Int64?
        var eventHasPeripheral = true
        /// Start of the last connection event the central opened (µs).
        var anchor: Int64?
        var misfits = 0
        /// Interval announced by LL_CONNECTION_UPDATE_IND, until the instant is seen.
        var pendingInterval: UInt16?
        /// Events whose central packet the sniffer missed (only the peripheral's answer was seen).
        public var eventsWithoutCentral = 0
        var lastSN: [Bool?] = [nil, nil]
        /// Per side: the NESN the other side sent after this side's last PDU (nil: none seen since), i.e.
        /// whether the peer acknowledged it (NESN ≠ that PDU's SN, Vol 6 Part B 4.5.9).
        var peerAck: [Bool?] = [nil, nil]
        /// Per side: PDUs sent after an acknowledgement with the SN toggled (as the spec has it), and
        /// with the SN unchanged (an attack tool or a broken stack that keeps SN constant).
        var snToggles = [0, 0]
        var snKeptAfterAck = [0, 0]
        /// A side whose SN does not follow acknowledgements: for it, SN does not tell a retransmission.
        public func ignoresSN(_ side: Int) -> Bool { snKeptAfterAck[side] >= 2 && snKeptAfterAck[side] > snToggles[side] }
        var lastBytes: [[UInt8]] = [[], []]
        /// Per side: the frame and time of the last new PDU, and the run of copies of it being sent now.
        var lastPDU: [(frame: Int, time: Int64)] = [(0, 0), (0, 0)]
        var run: [AirRetransmissionBurst?] = [nil, nil]
        var lengthRequest: [(rx: UInt16, tx: UInt16)?] = [nil, nil]
        /// Per side (0 central, 1 peripheral): the frame and ATT opcode of the last L2CAP start
        /// fragment that carried one. How much of that PDU came is the session's reassembler's to say.
        var startedATT: [(frame: Int, opcode: UInt8)?] = [nil, nil]
        /// Frame of the last packet loss the sniffer showed (missed events, packets, fragments).
        var lastLossFrame = 0
        /// ATT transactions closed because the sniffer lost the response.
        public var lostResponses = 0
        var losses: Int { missedEvents + eventsWithoutCentral + unansweredEvents + crcErrors }
        /// The trailing run of central packets with no peripheral packet between them and the same SN and
        /// NESN: the central resending a PDU nobody acknowledged and acknowledging nothing new, event after
        /// event. The sniffer missing only the peripheral's packets leaves the central's SN/NESN moving
        /// (the central hears the peripheral); a peripheral that went silent freezes them.
        public internal(set) var silence: Silence?
        public struct Silence: Sendable {
            public var firstFrame: Int, firstTime: Int64
            public var lastFrame: Int, lastTime: Int64
            public var events: Int
            var sn: Bool, nesn: Bool
            /// The connection event counter of the last packet, when the capture header gives it (nRF Sniffer).
            var counter: UInt16?
        }
        /// Central packets in a row with frozen SN/NESN and no answer before the peripheral counts as silent.
        static let silentEvents = 6
        /// The last packet the sniffer saw from either side.
        public internal(set) var lastFromPeripheral: Int?

        /// Follows the central's retransmissions into silence (see `silence`).
        mutating func noteSilence(_ p: LLAirPacket, _ direction: LLDirection, frame: Int, time: Int64) {
            switch direction {
            case .peripheralToCentral:
                silence = nil
                lastFromPeripheral = frame
            case .centralToPeripheral:
                if var s = silence, s.sn == p.sn, s.nesn == p.nesn {
                    // Count connection events by the header's event counter when it has one: several
                    // packets of one event (a sniffer reporting the same event twice) are one event.
                    if p.radio.eventCounter == nil || p.radio.eventCounter != s.counter { s.events += 1 }
                    s.counter = p.radio.eventCounter
                    (s.lastFrame, s.lastTime) = (frame, time)
                    silence = s
                } else {
                    silence = Silence(firstFrame: frame, firstTime: time, lastFrame: frame, lastTime: time, events: 1, sn: p.sn, nesn: p.nesn,
                                      counter: p.radio.eventCounter)
                }
            case .unknown:
                break
            }
        }

        /// The peripheral went silent: the central kept transmitting, unanswered and unacknowledged.
        var peripheralSilent: Silence? { silence.flatMap { $0.events >= Self.silentEvents ? $0 : nil } }
        var phy: (tx: UInt8, rx: UInt8) = (1, 1)

        /// A new connection event opens this long (µs) after the previous packet at most (3 ms, or
        /// half the connection interval if smaller).
        static let eventGap: Int64 = 3_000
        /// How far from the expected anchor (µs) an event's first packet may start and still be the central's.
        static let anchorTolerance: Int64 = 150
        /// The inter frame space (Core v5.4 Vol 6 Part B 4.1.1): 150 µs between the packets of an event.
        static let tIFS: Int64 = 150
        /// The shortest packet on LE 1M (an empty PDU: preamble, access address, header, CRC: 10 bytes, 80 µs).
        static let shortestPacket: Int64 = 80

        /// A packet's time on air (µs) on LE 1M (8 µs a byte, 1-byte preamble) or LE 2M (4 µs a byte,
        /// 2-byte preamble) (Vol 6 Part A 3.2, Part B 2.1); nil on Coded PHY or when the header does not say.
        static func airTime(_ p: LLAirPacket) -> Int64? {
            let bytes = Int64(4 + 2 + p.payloadLength + 3 + (p.ctePresent ? 1 : 0))
            switch p.radio.phy ?? 0 {
            case 0: return (1 + bytes) * 8
            case 1: return (2 + bytes) * 4
            default: return nil
            }
        }

        /// The header's direction, else the timing heuristic (see `AirCaptureAdapter`): the central
        /// opens every connection event (Core v5.4 Vol 6 Part B 4.5.1), the two sides alternate
        /// within it, T_IFS (150 µs) apart.
        mutating func direction(of p: LLAirPacket, at time: Int64) -> LLDirection {
            var given = p.radio.direction
            let airTime = Self.airTime(p)
            if given != .unknown, given == lastDirection, let previous = lastAirTime, let airTime, time >= lastTime,
               p.radio.channel == nil || p.radio.channel == lastChannel,
               time - lastTime < min(previous, airTime) + Self.tIFS + Self.shortestPacket {
                // The same sender twice, closer than a packet of the other side (T_IFS + the shortest packet +
                // T_IFS) would allow: the header is wrong (seen in WHAD captures); the sides alternate.
                correctedDirections += 1
                given = given == .centralToPeripheral ? .peripheralToCentral : .centralToPeripheral
            }
            defer { lastAirTime = airTime }
            let interval = Int64(intervalUnits) * 1250
            let gap = interval > 0 ? min(Self.eventGap, interval / 2) : Self.eventGap
            let newEvent = lastDirection == .unknown || time - lastTime > gap || time < lastTime
                || (p.radio.channel != nil && lastChannel != nil && p.radio.channel != lastChannel)
            var d = given
            if newEvent {
                if lastDirection != .unknown, !eventHasPeripheral { unansweredEvents += 1 }
                var central = true
                if interval > 0, let anchor, time > anchor {
                    // Where the event should start: anchors are `interval` apart. Sniffers stamp the packet's
                    // start or its end, so the tolerance grows with the packet's air time (8 µs a byte on 1M).
                    var k = (time - anchor + interval / 2) / interval
                    var offset = time - anchor - k * interval
                    let tolerance = Self.anchorTolerance + 8 * Int64(p.payloadLength)
                    if offset > tolerance, let next = pendingInterval {
                        // The connection update took effect: re-anchor on this event with the new interval.
                        intervalUnits = next
                        pendingInterval = nil
                        k = 1
                        offset = 0
                    } else if offset > tolerance {
                        // Late for an anchor: the peripheral's answer to a central packet the sniffer missed —
                        // unless it keeps happening, which means the anchor drifted: re-anchor.
                        misfits += 1
                        central = misfits >= 2
                    } else {
                        misfits = 0
                    }
                    if k > 1 { missedEvents += Int(min(k - 1, 1_000_000)) }
                    if !central { self.anchor = anchor + k * interval }
                }
                if given != .unknown { central = given == .centralToPeripheral }
                if central {
                    anchor = time
                    misfits = 0
                } else {
                    eventsWithoutCentral += 1
                }
                eventHasPeripheral = false
                if given == .unknown {
                    inferredDirections += 1
                    d = central ? .centralToPeripheral : .peripheralToCentral
                }
            } else if given == .unknown {
                inferredDirections += 1
                d = lastDirection == .centralToPeripheral ? .peripheralToCentral : .centralToPeripheral
            }
            if d == .peripheralToCentral { eventHasPeripheral = true }
            lastDirection = d
            lastChannel = p.radio.channel
            return d
        }

        /// Data PDUs with no empty PDU and no LL control among them: what an export that kept only data
        /// leaves (a sniffer records empty PDUs in nearly every connection event).
        static let filteredExportPDUs = 10
        var keptOnlyData: Bool { emptyPDUs == 0 && controlPDUs == 0 && encryptedPDUs == 0 }

        /// The radio facts of the link, for its timeline.
        var summary: String {
            var parts = ["\(packets) packets", "\(dataPDUs) data PDUs", "\(controlPDUs) LL control", "\(emptyPDUs) empty"]
            if retransmissions > 0 { parts.append("\(retransmissions) retransmissions") }
            parts.append("\(crcErrors) CRC errors")
            if keptOnlyData, dataPDUs >= Self.filteredExportPDUs {
                parts.append("no empty PDU and no LL control: a filtered export, what it removed is not sniffer loss")
            } else if missedEvents > 0 || unansweredEvents > 0 || eventsWithoutCentral > 0 {
                parts.append("missed by the sniffer: \(missedEvents) whole connection events, \(eventsWithoutCentral) central packets, "
                             + "\(unansweredEvents) peripheral answers")
            }
            if lostResponses > 0 { parts.append("\(lostResponses) ATT responses not captured") }
            if encryptedPDUs > 0 { parts.append("\(encryptedPDUs) encrypted PDUs not decodable" + (micFailures > 0 ? " (\(micFailures) with a bad MIC)" : "")) }
            if plainAfterEncryption > 0 { parts.append("\(plainAfterEncryption) PDUs after encryption start decoded as the sniffer gave them (decrypted or not encrypted)") }
            if inferredDirections > 0 { parts.append("direction inferred from timing for \(inferredDirections)") }
            if correctedDirections > 0 { parts.append("\(correctedDirections) header directions contradicted by timing (corrected)") }
            return parts.joined(separator: ", ")
        }
    }
}
