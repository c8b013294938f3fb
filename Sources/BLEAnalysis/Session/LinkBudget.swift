import BLEProtocol

/// What limits a transfer (docs/RULES.md "Transfer and its limits"). The raw values are the
/// interface `connections[].transfer.*.limitedBy` other tools rely on.
public enum TransferLimit: String, Sendable, CaseIterable {
    /// Each Write Request (or Prepare Write Request) waits for its response (Core v5.4 Vol 3 Part F 3.4.5.1).
    case writeWithResponse = "write-with-response"
    /// Each indication waits for its confirmation (Core v5.4 Vol 3 Part F 3.4.7.2).
    case indicationConfirmation = "indication-confirmation"
    /// The values fill ATT_MTU−3: the application segments at a small ATT_MTU.
    case attMTU = "att-mtu"
    /// PDUs longer than the LL data length in force cross the air in several LL data PDUs.
    case dataLength = "data-length"
    /// LE 1M or LE Coded PHY.
    case phy
    /// The connection interval: one round trip, or one set of controller buffers, per connection event.
    case connectionInterval = "connection-interval"
    /// Answers took up to `latency + 1` connection events: the peripheral listened only every so many.
    case peripheralLatency = "peripheral-latency"
    /// The host's ACL buffers in the controller (LE Read Buffer Size), refilled once per connection event.
    case controllerBuffers = "controller-buffers"
    /// The recording host answered (Write Response, Handle Value Confirmation) later than the link allowed.
    case hostStall = "host-stall"
    /// The peer answered later than the link allowed.
    case peerResponse = "peer-response"
    /// The application sent less than the link allowed (the PDUs were spaced by the application).
    case application
}

/// The PDUs of one side of a connection that carry an attribute value — Write Request, Write Command,
/// Signed Write Command, Prepare Write Request, Handle Value Notification / Indication, Multiple
/// Handle Value Notification — with the minimum time the link needed to carry them, PDU by PDU,
/// under the parameters in force when each went by (docs/RULES.md gives the formula). Plain integers
/// and doubles, updated once per PDU: nothing is allocated.
public struct TransferDirection: Sendable {
    /// The recording host sent these PDUs.
    public let sentByHost: Bool
    public internal(set) var pdus = 0
    /// Sum of their attribute-value lengths (Prepare Write: the part value; Signed Write: without its signature).
    public internal(set) var bytes = 0
    public internal(set) var firstTime: Int64 = 0
    public internal(set) var lastTime: Int64 = 0
    public internal(set) var firstFrame = 0
    public internal(set) var lastFrame = 0
    /// Write Requests and Prepare Write Requests.
    public internal(set) var writeRequests = 0
    /// Write Commands and Signed Write Commands.
    public internal(set) var writeCommands = 0
    /// Handle Value Notifications and Multiple Handle Value Notifications.
    public internal(set) var notifications = 0
    public internal(set) var indications = 0
    /// PDUs whose value filled the ATT_MTU in force (known ATT_MTU only): the application segments.
    public internal(set) var fullPDUs = 0
    /// PDUs longer than one LL data PDU at the data length in force (L2CAP header included).
    public internal(set) var fragmentedPDUs = 0
    /// PDUs sent on the LE 1M or LE Coded PHY (counted per stretch of unchanged link: `flushed`).
    public var slowPHYPDUs: Int { flushedSlowPHY + (phy != 2 ? stretchPDUs : 0) }
    /// PDUs sent while the connection interval was not known (capture began mid-connection, BR/EDR).
    public var unknownLinkPDUs: Int { flushedUnknown + (intervalUnits == 0 ? stretchPDUs : 0) }
    /// Minimum time the link needed, µs, for the PDUs' three constraints: one connection interval per
    /// Write Request / indication round trip; the air time of their LL data PDUs (data length, PHY);
    /// the controller's buffers refilled once per connection event.
    public var roundTripMicros: Double { flushedRoundTrip + Double(stretchRoundTrips) * cacheInterval }
    public var airMicros: Double { flushedAir + Double(stretchPackets) * cacheExchange0 + Double(stretchOctets) * cachePerOctet }
    public var bufferMicros: Double { flushedBuffers + Double(stretchBufferPackets) * cacheBufferMicros }
    /// The largest of the three: the constraints hold at once, so the link needed at least the longest.
    public var minimumMicros: Double { max(roundTripMicros, airMicros, bufferMicros) }

    /// Per PDU the model adds integers for the current stretch of unchanged link parameters; a change
    /// (or the end) turns them into times with that stretch's arithmetic.
    var stretchPDUs = 0
    var stretchPackets = 0
    var stretchOctets = 0
    var stretchBufferPackets = 0
    var stretchRoundTrips = 0
    var flushedAir = 0.0
    var flushedRoundTrip = 0.0
    var flushedBuffers = 0.0
    var flushedSlowPHY = 0
    var flushedUnknown = 0
    /// Gaps between consecutive PDUs longer than `LinkBudget.idleGap` (the application paused), µs.
    public internal(set) var idleMicros: Int64 = 0
    public internal(set) var idleGaps = 0
    /// Gaps under 1 ms: PDUs handed over together (a host refilling the buffers a connection event
    /// freed, a controller delivering what one event carried).
    public internal(set) var burstGaps = 0
    /// Write Requests / Prepare Writes / indications of this side that got their answer, and the
    /// time they waited for it.
    public internal(set) var answered = 0
    public internal(set) var answerWaitMicros: Int64 = 0
    /// The link when the last PDU went by.
    public internal(set) var intervalUnits: UInt16 = 0
    public internal(set) var latency: UInt16 = 0
    /// LL payload octets per data PDU in this direction (data length, bounded by its time on the PHY).
    public internal(set) var llPayload = LinkBudget.defaultOctets
    /// 1 = LE 1M, 2 = LE 2M, 3 = LE Coded (HCI PHY values, Core v5.4 Vol 4 Part E 7.7.65.12).
    public internal(set) var phy: UInt8 = 1
    public internal(set) var mtu = ATT.defaultLEMTU
    public internal(set) var mtuKnown = false

    init(sentByHost: Bool) { self.sentByHost = sentByHost }

    /// First to last PDU, seconds; nil below two PDUs.
    public var seconds: Double? { pdus >= 2 ? Double(lastTime &- firstTime) / 1e6 : nil }   // safe: see `record`

    public var bytesPerSecond: Double? {
        guard let s = seconds, s > 0 else { return nil }
        return Double(bytes) / s
    }

    /// The fastest the link carries the same PDUs: `bytes` over the minimum time they need. Nil below
    /// two PDUs, or when a PDU went by with the interval unknown. (`bytesPerSecond` spans first to last
    /// PDU, n − 1 of n PDU times: on n PDUs sent at the ceiling it reads n / (n − 1) of it.)
    public var ceilingBytesPerSecond: Double? {
        guard pdus >= 2, unknownLinkPDUs == 0, minimumMicros > 0 else { return nil }
        return Double(bytes) * 1e6 / minimumMicros
    }

    /// Mean time a Write Request or indication of this side waited for its answer, µs.
    public var averageAnswerMicros: Int64? { answered > 0 ? answerWaitMicros / Int64(answered) : nil }

    /// What limits the transfer, most limiting first (docs/RULES.md "Transfer and its limits").
    public var limitedBy: [TransferLimit] {
        guard let ceiling = ceilingBytesPerSecond, let rate = bytesPerSecond, let span = seconds else { return [] }
        var limits: [TransferLimit] = []
        func add(_ l: TransferLimit) { if !limits.contains(l) { limits.append(l) } }
        // The component that sets the ceiling first, then the others that cost time.
        // A component that needed less than half the time of the largest one does not limit.
        let largest = max(roundTripMicros, airMicros, bufferMicros)
        let components = [(roundTripMicros, 0), (airMicros, 1), (bufferMicros, 2)].filter { $0.0 > 0 && $0.0 * 2 >= largest }
            .sorted { $0.0 > $1.0 }
        for (_, which) in components {
            switch which {
            case 0:
                if writeRequests >= indications {
                    add(.writeWithResponse); if indications > 0 { add(.indicationConfirmation) }
                } else {
                    add(.indicationConfirmation); if writeRequests > 0 { add(.writeWithResponse) }
                }
                add(.connectionInterval)
            case 1:
                if fragmentedPDUs > 0, llPayload < LinkBudget.maxOctets { add(.dataLength) }
                if slowPHYPDUs > 0 { add(.phy) }
            default:
                add(.controllerBuffers)
                add(.connectionInterval)
            }
        }
        // Values that fill a small ATT_MTU: the application segments; a larger ATT_MTU carries more per PDU.
        if mtuKnown, mtu < LinkBudget.oneLLPacketMTU, fullPDUs * 2 >= pdus {
            limits.insert(.attMTU, at: min(1, limits.count))
        }
        // The application paused for most of the span: it sent less than the link allowed.
        if Double(idleMicros) >= span * 1e6 / 2, rate < ceiling / 2 {
            limits.insert(.application, at: 0)
            return limits
        }
        // While busy, well below the ceiling: what spaced the PDUs.
        let busy = span - Double(idleMicros) / 1e6, busyGaps = pdus - 1 - idleGaps
        if busy > 0, busyGaps > 0, Double(bytes) / busy < ceiling / 2 {
            let interval = Double(intervalUnits) * 1250
            if let wait = averageAnswerMicros, Double(answerWaitMicros) >= span * 1e6 / 2, Double(wait) > 1.5 * interval {
                // The answers paced the transfer and took longer than one round trip per interval.
                let cause: TransferLimit = latency > 0 && Double(wait) <= Double(Int(latency) + 2) * interval
                    ? .peripheralLatency : sentByHost ? .peerResponse : .hostStall
                limits.removeAll { $0 == cause }
                limits.insert(cause, at: min(1, limits.count))
            } else if burstGaps * 4 >= busyGaps, busy * 1e6 / Double(busyGaps) <= 1.5 * interval * Double(Int(latency) + 1) {
                // In bursts, a burst per connection event or more, yet below the ceiling (which takes the whole
                // event as usable): the controllers moved a few LL packets per event; more events carry more.
                limits.removeAll { $0 == .connectionInterval }
                limits.insert(.connectionInterval, at: 0)
            } else {
                // Evenly paced, or fewer PDUs than connection events, no long pauses: the application's own pace.
                limits.insert(.application, at: 0)
            }
        }
        return limits
    }

    /// The link inputs of the last PDU and what they gave: the PDUs of a connection share them, so the
    /// link's arithmetic runs when a parameter changes, not per PDU; per PDU, one multiply-add (and a
    /// division when the PDU needs several LL packets).
    var cacheKey = LinkInputs.Key(a: .max, b: .max)
    var cachePayload = LinkBudget.defaultOctets
    /// An LL data PDU exchange is `cacheExchange0 + octets × cachePerOctet` µs.
    var cacheExchange0 = 0.0
    var cachePerOctet = 0.0
    var cacheBufferLength = 0
    /// The interval's share of one ACL packet: interval ÷ the host's buffers, µs.
    var cacheBufferMicros = 0.0
    var cacheInterval = 0.0
    var cacheIdleGap: Int64 = 100_000

    /// Counts one PDU: `value` bytes of application data in an ATT PDU of `attLength` bytes. Integers only.
    @inline(__always)
    mutating func record(_ kind: LinkBudget.Kind, value: Int, attLength: Int, full: Bool, time: Int64, frame: Int, link: LinkInputs,
                         mtu: Int, mtuKnown: Bool) {
        let key = link.key
        if key != cacheKey { recompute(link, key: key) }
        if pdus == 0 {
            firstTime = time
            firstFrame = frame
        } else {
            // safe: wrapping only on hostile timestamps, where it skews a statistic and traps nothing.
            let gap = time &- lastTime
            if gap > cacheIdleGap { idleMicros &+= gap; idleGaps &+= 1 } else if gap < 1000 { burstGaps &+= 1 }
        }
        // safe (every &+ below): counts and byte sums of one capture, far from Int.max.
        pdus &+= 1
        stretchPDUs &+= 1
        bytes &+= value
        lastTime = time
        lastFrame = frame
        self.mtu = mtu
        self.mtuKnown = mtuKnown
        switch kind {
        case .writeRequest: writeRequests &+= 1; stretchRoundTrips &+= 1
        case .writeCommand: writeCommands &+= 1
        case .notification: notifications &+= 1
        case .indication: indications &+= 1; stretchRoundTrips &+= 1
        }
        if full { fullPDUs &+= 1 }
        // Air: the L2CAP PDU (4-byte basic header, Core v5.4 Vol 3 Part A 3.1) in LL data PDUs of
        // `cachePayload` octets; each costs a fixed exchange plus its octets (`airMicros`).
        let sdu = attLength &+ 4   // safe: attLength is bounded by the L2CAP PDU (65,535)
        stretchOctets &+= sdu
        if sdu <= cachePayload {
            stretchPackets &+= 1
        } else {
            fragmentedPDUs &+= 1
            stretchPackets &+= (sdu &+ cachePayload &- 1) / cachePayload   // cachePayload ≥ 1
        }
        if cacheBufferLength > 0 {   // the host's ACL packets in the controller
            stretchBufferPackets &+= sdu <= cacheBufferLength ? 1 : (sdu &+ cacheBufferLength &- 1) / cacheBufferLength
        }
    }

    /// Turns the current stretch's integers into times with its arithmetic.
    mutating func flush() {
        flushedAir = airMicros
        flushedRoundTrip = roundTripMicros
        flushedBuffers = bufferMicros
        flushedSlowPHY = slowPHYPDUs
        flushedUnknown = unknownLinkPDUs
        (stretchPDUs, stretchPackets, stretchOctets, stretchBufferPackets, stretchRoundTrips) = (0, 0, 0, 0, 0)
    }

    /// The link's arithmetic under `inputs` (Core v5.4 Vol 6 Part B 2.1, 4.5.10).
    @inline(never)
    mutating func recompute(_ inputs: LinkInputs, key: LinkInputs.Key) {
        flush()
        let link = LinkBudget(inputs)
        cacheKey = key
        intervalUnits = link.intervalUnits
        latency = link.latency
        llPayload = link.payload
        phy = link.phy
        cachePayload = link.payload
        cacheIdleGap = link.idleGap
        cacheExchange0 = link.exchangeMicros(0)
        cachePerOctet = link.exchangeMicros(1) - cacheExchange0
        // One request or indication per round trip: sent in one connection event, answered in the next at
        // the earliest (the answer is not queued when the event that carries the request runs).
        cacheInterval = Double(link.intervalUnits) * 1250
        // The host's ACL packets in the controller: at most `bufferCount` per connection event.
        if sentByHost, link.intervalUnits > 0, link.bufferCount > 0, link.bufferLength > 0 {
            cacheBufferLength = link.bufferLength
            cacheBufferMicros = cacheInterval / Double(link.bufferCount)
        } else {
            cacheBufferLength = 0
            cacheBufferMicros = 0
        }
    }

    mutating func answered(after micros: Int64) {
        answered &+= 1
        answerWaitMicros &+= max(0, micros)
    }
}

/// Application data per connection and direction (`connections[].transfer` in the JSON report).
public struct Transfer: Sendable {
    public internal(set) var sent = TransferDirection(sentByHost: true)
    public internal(set) var received = TransferDirection(sentByHost: false)
    /// LE Data Length Change's maximum TX / RX time, µs (Core v5.4 Vol 4 Part E 7.7.65.7); 328 until then.
    public internal(set) var dataLengthTime: (tx: UInt16, rx: UInt16)?
    public init() {}
}

/// What `Connection` holds of the link when a PDU goes by, as read per PDU (no arithmetic).
struct LinkInputs {
    var intervalUnits: UInt16
    var latency: UInt16
    var octets: UInt16
    var time: UInt16
    var phy: UInt8
    var encrypted: Bool
    var bufferCount: UInt16
    var bufferLength: UInt16

    struct Key: Equatable { var a: UInt64; var b: UInt64 }
    /// All of it in two words: a PDU under the same link compares equal in two instructions.
    @inline(__always)
    var key: Key {
        Key(a: UInt64(intervalUnits) | UInt64(latency) << 16 | UInt64(octets) << 32 | UInt64(time) << 48,
            b: UInt64(phy) | (encrypted ? 0x100 : 0) | UInt64(bufferCount) << 16 | UInt64(bufferLength) << 32)
    }
}

/// The link parameters a PDU goes by with, and the air-time arithmetic (Core v5.4 Vol 6 Part B 2.1
/// packet formats, 4.5.10 data length; Vol 6 Part A 3.2 PHY rates).
struct LinkBudget {
    enum Kind { case writeRequest, writeCommand, notification, indication }

    /// Default LL data length before any LE Data Length Change: 27 octets, 328 µs (Vol 6 Part B 4.5.10).
    static let defaultOctets = 27
    static let defaultTime = 328
    /// The largest LL Data PDU payload (Vol 6 Part B 2.4, 4.5.10).
    static let maxOctets = 251
    /// The ATT_MTU whose full PDU (plus the 4-byte L2CAP header) fills one LL PDU of 251 octets.
    static let oneLLPacketMTU = 247
    static let ifsMicros = 150.0

    var intervalUnits: UInt16
    var latency: UInt16
    /// A gap between two PDUs of one side longer than this is the application pausing, µs: more than
    /// 4 connection events a peripheral may skip and answer in (latency + 2 intervals, twice), at least 100 ms.
    var idleGap: Int64 { max(100_000, 2 * (Int64(latency) + 2) * Int64(intervalUnits) * 1250) }
    /// LL payload octets per data PDU: the data length's octets, bounded by what its time allows on the PHY.
    var payload: Int
    var phy: UInt8
    /// MIC octets on an encrypted link (Vol 6 Part B 2.4).
    var mic: Int
    var bufferCount: Int
    var bufferLength: Int

    init(_ i: LinkInputs) {
        self.init(intervalUnits: i.intervalUnits, latency: i.latency, octets: Int(i.octets), time: Int(i.time), phy: i.phy,
                  encrypted: i.encrypted, bufferCount: Int(i.bufferCount), bufferLength: Int(i.bufferLength))
    }

    init(intervalUnits: UInt16, latency: UInt16, octets: Int, time: Int, phy: UInt8, encrypted: Bool, bufferCount: Int, bufferLength: Int) {
        self.intervalUnits = intervalUnits
        self.latency = latency
        self.phy = phy
        mic = encrypted ? 4 : 0
        self.bufferCount = bufferCount
        self.bufferLength = bufferLength
        // The octets that fit in `time` on this PHY (1M: 8 µs per octet with 10 octets of preamble,
        // access address, header and CRC; 2M: 4 µs with 11). Coded: the octets alone.
        var fit = octets
        switch phy {
        case 2: fit = time / 4 - 11 - mic
        case 3: break
        default: fit = time / 8 - 10 - mic
        }
        payload = max(1, min(octets, fit, Self.maxOctets))
    }

    /// Air time of one LL data PDU with `octets` of payload, µs.
    @inline(__always)
    func packetMicros(_ octets: Int, mic: Int) -> Double {
        switch phy {
        case 2: return Double(2 + 4 + 2 + octets + mic + 3) * 4
        // LE Coded at S=2 (the faster coding: a ceiling): 80 µs preamble, 256 access address, 16 CI,
        // 24 TERM1, 16 µs per octet of header, payload and CRC, 6 TERM2.
        case 3: return 376 + Double(2 + octets + mic + 3) * 16 + 6
        default: return Double(1 + 4 + 2 + octets + mic + 3) * 8
        }
    }

    /// One LL data PDU and the peer's empty PDU back, T_IFS after each (an empty PDU carries no MIC).
    @inline(__always)
    func exchangeMicros(_ octets: Int) -> Double {
        packetMicros(octets, mic: mic) + packetMicros(0, mic: 0) + 2 * Self.ifsMicros
    }
}
