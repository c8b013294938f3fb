import BLEBytes
import BLECapture
import BLEProtocol

/// A copy of one frame as it went by, with what the upper layers need to be decoded later: the
/// L2CAP PDUs it completed and, for each, the session's display context *at that moment* (the
/// request a response answers, whether a K-frame starts an SDU, the ATT_MTU). Its storage is
/// reused frame after frame (`RecentFrames`), so keeping a frame allocates nothing once the
/// buffers have grown to the largest frame seen.
struct KeptFrame {
    var number = 0
    var timestamp: Int64 = 0
    var direction = Direction.sent
    var kind = FrameKind.command
    var adapter: UInt16 = 0
    var recordOffset = 0
    var payloadOffset = 0
    var originalLength = 0
    var rawType: UInt16 = 0
    var problem: RecordProblem?
    var status = FrameStatus.ok
    var bytes: [UInt8] = []
    /// `pdus[0 ..< pduCount]` belong to this frame (the rest are storage kept for reuse).
    var pdus: [KeptPDU] = []
    var pduCount = 0
    /// The upper layers of `pdus[0 ..< frozenCount]`, decoded before a discovery response changed
    /// a GATT database (`RecentFrames.freeze`).
    var frozen: [Layer] = []
    var frozenCount = 0

    /// One complete L2CAP PDU (basic header first) and the context to display it with.
    struct KeptPDU {
        var bytes: [UInt8] = []
        var base = 0
        var received = false
        var context = ATTDisplayContext.none
        var firstKFrame: Bool?
        var mtu = 23
        var connection = 0
    }

    /// Takes `frame`'s fields and bytes (its PDUs come through `addPDU`).
    mutating func keep(_ frame: Frame) {
        number = frame.number
        timestamp = frame.timestamp
        direction = frame.direction
        kind = frame.kind
        adapter = frame.adapter
        recordOffset = frame.recordOffset
        payloadOffset = frame.payloadOffset
        originalLength = frame.originalLength
        rawType = frame.rawType
        problem = frame.problem
        status = .ok
        bytes.removeAll(keepingCapacity: true)
        bytes.append(contentsOf: frame.payload)
        pduCount = 0
        if frozenCount > 0 {
            frozen = []
            frozenCount = 0
        }
    }

    /// Copies a PDU `c` completed, with the display context `Connection.displayLayers` would use now.
    mutating func addPDU(_ pdu: ByteReader, _ c: Connection, received: Bool) {
        if pduCount == pdus.count { pdus.append(KeptPDU()) }
        let state = c.displayState(pdu, received: received)
        pdus[pduCount].bytes.removeAll(keepingCapacity: true)
        pdus[pduCount].bytes.append(contentsOf: pdu.remainingBytes)
        pdus[pduCount].base = pdu.absoluteOffset
        pdus[pduCount].received = received
        pdus[pduCount].context = state.context
        pdus[pduCount].firstKFrame = state.firstKFrame
        pdus[pduCount].mtu = c.att.mtu
        pdus[pduCount].connection = c.index
        pduCount += 1
    }

    /// Calls `body` with the frame rebuilt over the kept bytes.
    func withFrame<T>(_ body: (Frame) -> T) -> T {
        bytes.withUnsafeBytes { payload in
            body(Frame(number: number, timestamp: timestamp, direction: direction, kind: kind, adapter: adapter,
                       recordOffset: recordOffset, payloadOffset: payloadOffset, payload: payload,
                       originalLength: originalLength, rawType: rawType, problem: problem))
        }
    }

    /// The upper layers of the PDUs this frame completed, decoded as `packets` shows them (the
    /// context was taken when the PDU went by, so a response is named by its request).
    func upperLayers() -> [Layer] {
        var layers = frozen
        for p in pdus[frozenCount ..< pduCount] {
            p.bytes.withUnsafeBytes { b in
                var r = ByteReader(b, base: p.base)
                L2CAPDisplay.decode(pdu: &r, context: p.context, isFirstKFrame: p.firstKFrame, into: &layers)
            }
        }
        return layers
    }

    /// Decodes the upper layers now, while the GATT databases are as they were when the PDUs went by.
    mutating func freeze() {
        guard frozenCount < pduCount else { return }
        frozen = upperLayers()
        frozenCount = pduCount
    }

    /// The ATT value the frame's last value-carrying PDU holds (see `CapturedValue.init?(pdu:mtu:)`).
    func value() -> ReportExtras.CapturedValue? {
        var found: ReportExtras.CapturedValue? = nil
        for p in pdus.prefix(pduCount) {
            if let v = p.bytes.withUnsafeBytes({ ReportExtras.CapturedValue(pdu: ByteReader($0, base: p.base), mtu: p.mtu) }) { found = v }
        }
        return found
    }
}

/// The last `capacity` frames, oldest overwritten first: where the frames before an evidence
/// frame are found once a detector has spoken (report mode only; `bleanalyze FILE` keeps none).
struct RecentFrames {
    private var slots: [KeptFrame]
    /// Index of the newest frame in `slots`; `count` frames are valid.
    private var newest = -1
    private(set) var count = 0

    init(capacity: Int) { slots = Array(repeating: KeptFrame(), count: max(1, capacity)) }

    var capacity: Int { slots.count }

    /// Starts keeping `frame` in the oldest slot.
    mutating func push(_ frame: Frame) {
        newest = (newest + 1) % slots.count
        slots[newest].keep(frame)
        count = min(count + 1, slots.count)
    }

    /// The PDU the newest frame completed.
    mutating func addPDU(_ pdu: ByteReader, _ c: Connection, received: Bool) {
        guard newest >= 0 else { return }
        slots[newest].addPDU(pdu, c, received: received)
    }

    /// Decodes the upper layers of the newest `depth` frames now (see `KeptFrame.freeze`).
    mutating func freeze(depth: Int) {
        for back in 0 ..< min(depth, count) { slots[(newest - back + slots.count) % slots.count].freeze() }
    }

    /// The verdict on the newest frame (known once the analysis has consumed it).
    mutating func setStatus(_ status: FrameStatus) {
        guard newest >= 0 else { return }
        slots[newest].status = status
    }

    /// The kept frame numbered `number`, if still kept. Frame numbers rise one by one, so the slot
    /// is found by distance from the newest; a reader that skipped numbers falls back to a scan.
    func frame(_ number: Int) -> KeptFrame? {
        guard newest >= 0 else { return nil }
        let back = slots[newest].number - number
        let oldest = slots[(newest - count + 1 + slots.count) % slots.count].number
        guard back >= 0, number >= oldest else { return nil }
        if back < count {
            let slot = slots[(newest - back + slots.count) % slots.count]
            if slot.number == number { return slot }
        }
        return slots.prefix(count).first { $0.number == number }
    }
}
