import BLECapture
import Foundation

/// The one builder of HCI captures for tests: a btsnoop (H4) file written packet by packet, each
/// packet laid out here once, little-endian as the Core spec has it, with the clause it follows.
/// Times are relative: every call takes `dt`, microseconds since the previous packet.
///
///     var b = CaptureBuilder()
///     b.leConnected(1000, handle: 0x40)
///     b.acl(1000, .received, handle: 0x40, [0x1B, 0x03, 0x00, 0x01])   // ATT notification
///     let path = try b.temporaryFile()
public struct CaptureBuilder {
    /// 2025-11-21, far from the epoch so durations never read as dates.
    public static let defaultStart: Int64 = 1_763_700_000_000_000
    /// C0:FF:EE:00:00:01 (random static), as it lies in the events: least significant byte first.
    public static let defaultPeer: [UInt8] = [0x01, 0x00, 0x00, 0xEE, 0xFF, 0xC0]

    public var writer = BTSnoopWriter()
    public var time: Int64 = 0
    public let start: Int64
    public var peer: [UInt8]
    /// Frames written so far (the next packet is frame `frames + 1`).
    public private(set) var frames = 0

    public init(start: Int64 = CaptureBuilder.defaultStart, peer: [UInt8] = CaptureBuilder.defaultPeer) {
        self.start = start
        self.peer = peer
    }

    public var bytes: [UInt8] { writer.bytes }

    /// Moves the clock to an absolute time (microseconds since 0001 as btsnoop counts, like `start`),
    /// for captures whose packets are not written in time order.
    public mutating func seek(to absolute: Int64) { time = absolute - start }

    public static func le16(_ v: UInt16) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8)] }

    /// Any packet: H4 kind and the bytes after the H4 indicator. `original` marks it cut by the capture.
    public mutating func add(_ dt: Int64, _ dir: Direction, _ kind: FrameKind, _ payload: [UInt8], original: Int? = nil) {
        time += dt
        var r = RecordToWrite(timestamp: start + time, direction: dir, kind: kind, payload: payload)
        if let original { r.originalLength = original }
        writer.append(r)
        frames += 1
    }

    // MARK: HCI commands and events (Core v5.4 Vol 4 Part E 5.4.1, 5.4.4)

    /// An HCI command: opcode, parameters.
    public mutating func command(_ dt: Int64, _ opcode: UInt16, _ parameters: [UInt8]) {
        add(dt, .sent, .command, Self.le16(opcode) + [UInt8(parameters.count)] + parameters)
    }

    /// An event: code, parameters.
    public mutating func event(_ dt: Int64, _ code: UInt8, _ parameters: [UInt8]) {
        add(dt, .received, .event, [code, UInt8(parameters.count)] + parameters)
    }

    /// Command Status (7.7.15), one command credit.
    public mutating func commandStatus(_ dt: Int64, _ opcode: UInt16, _ status: UInt8) {
        event(dt, 0x0F, [status, 1] + Self.le16(opcode))
    }

    /// Command Complete (7.7.14), one command credit; `returns` starts with the status.
    public mutating func commandComplete(_ dt: Int64, _ opcode: UInt16, _ returns: [UInt8]) {
        event(dt, 0x0E, [1] + Self.le16(opcode) + returns)
    }

    /// LE Create Connection (7.8.12) to `peer` (random address), interval 30–50 ms, timeout 5 s.
    public mutating func leCreateConnection(_ dt: Int64, peer: [UInt8]? = nil) {
        command(dt, 0x200D, [0x60, 0x00, 0x30, 0x00, 0x00, 0x01] + (peer ?? self.peer)
                + [0x00, 0x18, 0x00, 0x28, 0x00, 0x00, 0x00, 0xF4, 0x01, 0x00, 0x00, 0x00, 0x00])
    }

    /// LE Connection Complete (7.7.65.1): the host as central (role 0x00) unless `role` is 0x01, to a
    /// random peer, interval 0x18 (30 ms), latency 0, supervision timeout 0xC8 (2 s) unless given.
    public mutating func leConnected(_ dt: Int64, handle: UInt16, status: UInt8 = 0, role: UInt8 = 0x00, peer: [UInt8]? = nil,
                                     interval: UInt16 = 0x18, latency: UInt16 = 0, timeout: UInt16 = 0xC8) {
        event(dt, 0x3E, [0x01, status] + Self.le16(handle) + [role, 0x01] + (peer ?? self.peer)
              + Self.le16(interval) + Self.le16(latency) + Self.le16(timeout) + [0x00])
    }

    /// Number Of Completed Packets (7.7.19) for one handle.
    public mutating func completed(_ dt: Int64, handle: UInt16, count: UInt16 = 1) {
        event(dt, 0x13, [1] + Self.le16(handle) + Self.le16(count))
    }

    /// Disconnection Complete (7.7.5).
    public mutating func disconnected(_ dt: Int64, handle: UInt16, reason: UInt8, status: UInt8 = 0) {
        event(dt, 0x05, [status] + Self.le16(handle) + [reason])
    }

    /// Encryption Change v1 (7.7.8); `mode` overrides Encryption_Enabled (0x01: E0 on BR/EDR, AES-CCM on LE;
    /// 0x02: AES-CCM on BR/EDR).
    public mutating func encryptionChange(_ dt: Int64, handle: UInt16, status: UInt8 = 0, enabled: Bool = true, mode: UInt8? = nil) {
        event(dt, 0x08, [status] + Self.le16(handle) + [mode ?? (enabled ? 0x01 : 0x00)])
    }

    // MARK: BR/EDR security (Core v5.4 Vol 4 Part E 7.1.10–7.1.11, 7.1.29–7.1.31, 7.5.7, 7.7.3, 7.7.6, 7.7.23–7.7.24, 7.7.40–7.7.45)

    /// Connection Complete (7.7.3): a BR/EDR ACL link (Link_Type 0x01), encryption off.
    public mutating func classicConnected(_ dt: Int64, handle: UInt16, peer: [UInt8]? = nil, status: UInt8 = 0) {
        event(dt, 0x03, [status] + Self.le16(handle) + (peer ?? self.peer) + [0x01, 0x00])
    }

    /// Link Key Request (7.7.23) and the host's Link Key Request Reply (with a key) or Negative Reply.
    public mutating func linkKeyRequest(_ dt: Int64, found: Bool, peer: [UInt8]? = nil) {
        let a = peer ?? self.peer
        event(dt, 0x17, a)
        if found { command(1000, 0x040B, a + [UInt8](repeating: 0x5A, count: 16)) } else { command(1000, 0x040C, a) }
    }

    /// Secure Simple Pairing: IO Capability Request (7.7.40), the host's IO Capability Request Reply
    /// (7.1.29), the peer's IO Capability Response (7.7.41), User Confirmation Request (7.7.42) and the
    /// host's answer (7.1.30 / 7.1.31), Simple Pairing Complete (7.7.45) with `status`. 6 frames.
    public mutating func simplePairing(_ dt: Int64, hostIO: UInt8, hostAuth: UInt8, peerIO: UInt8, peerAuth: UInt8,
                                       accept: Bool = true, status: UInt8 = 0, peer: [UInt8]? = nil) {
        let a = peer ?? self.peer
        event(dt, 0x31, a)
        command(1000, 0x042B, a + [hostIO, 0x00, hostAuth])
        event(50_000, 0x32, a + [peerIO, 0x00, peerAuth])
        event(50_000, 0x33, a + [0x40, 0xE2, 0x01, 0x00])
        command(1000, accept ? 0x042C : 0x042D, a)
        event(100_000, 0x36, [status] + a)
    }

    /// Link Key Notification (7.7.24): a new key of `type` (0x04 unauthenticated P-192 … 0x08 authenticated P-256).
    public mutating func linkKeyNotification(_ dt: Int64, type: UInt8, peer: [UInt8]? = nil) {
        event(dt, 0x18, (peer ?? self.peer) + [UInt8](repeating: 0xA5, count: 16) + [type])
    }

    /// Read Encryption Key Size (7.5.7) and its Command Complete with `size`.
    public mutating func readEncryptionKeySize(_ dt: Int64, handle: UInt16, size: UInt8) {
        command(dt, 0x1408, Self.le16(handle))
        commandComplete(1000, 0x1408, [0x00] + Self.le16(handle) + [size])
    }

    /// LE Advertising Report (7.7.65.2) with one report: event type (0x00 ADV_IND), address type
    /// (0x01 random), address (least significant byte first), data, RSSI (0xC4: −60 dBm).
    public mutating func advertisingReport(_ dt: Int64, address: [UInt8]? = nil, addressType: UInt8 = 0x01, eventType: UInt8 = 0x00,
                                           _ data: [UInt8], rssi: UInt8 = 0xC4) {
        event(dt, 0x3E, [0x02, 0x01, eventType, addressType] + (address ?? peer) + [UInt8(data.count)] + data + [rssi])
    }

    /// LE Set Advertising Data (7.8.7): declared length, then the 31-byte field as given (a test may
    /// give it shorter or wrong).
    public mutating func leSetAdvertisingData(_ dt: Int64, declared: UInt8, _ data: [UInt8]) {
        command(dt, 0x2008, [declared] + data)
    }

    // MARK: ACL and L2CAP (Vol 4 Part E 5.4.2; Vol 3 Part A 3.1)

    /// One ACL packet: the handle with its PB flag (0x2000: first, automatically flushable), an L2CAP
    /// basic header on `cid` (4: ATT, 6: SMP, 5: LE signalling) and `payload`. `l2capLength` lies
    /// about the length; `cutTo` cuts the packet as a snap length would.
    public mutating func acl(_ dt: Int64, _ dir: Direction, handle: UInt16, pb: UInt16 = 0x2000, cid: UInt16 = 4, _ payload: [UInt8],
                             l2capLength: Int? = nil, cutTo: Int? = nil) {
        let l2 = Self.le16(UInt16(truncatingIfNeeded: l2capLength ?? payload.count)) + Self.le16(cid) + payload
        var bytes = Self.le16(handle | pb) + Self.le16(UInt16(l2.count)) + l2
        if let cutTo, bytes.count > cutTo {
            let original = bytes.count
            bytes = Array(bytes.prefix(cutTo))
            add(dt, dir, .aclData, bytes, original: original)
        } else {
            add(dt, dir, .aclData, bytes)
        }
    }

    /// An ACL fragment carrying raw bytes, with the PB flag given (0x2000 first, 0x1000 continuing).
    public mutating func fragment(_ dt: Int64, _ dir: Direction, handle: UInt16, pb: UInt16, _ bytes: [UInt8]) {
        add(dt, dir, .aclData, Self.le16(handle | pb) + Self.le16(UInt16(bytes.count)) + bytes)
    }

    /// A continuation fragment (PB 0b01) carrying raw bytes.
    public mutating func continuation(_ dt: Int64, _ dir: Direction, handle: UInt16, _ bytes: [UInt8]) {
        fragment(dt, dir, handle: handle, pb: 0x1000, bytes)
    }

    /// An L2CAP basic frame (Vol 3 Part A 3.1): length, channel, payload — for tests that cut it into fragments.
    public static func l2cap(_ cid: UInt16, _ payload: [UInt8]) -> [UInt8] {
        le16(UInt16(payload.count)) + le16(cid) + payload
    }

    /// Writes the capture to a new temporary file and returns its path (the caller removes it).
    public func temporaryFile(_ label: String = "built") throws -> String {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("\(label)-\(UUID().uuidString).btsnoop")
        try Data(writer.bytes).write(to: url)
        return url.path
    }
}
