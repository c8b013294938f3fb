import BLEBytes
import BLECapture
import BLEProtocol

/// Puts PacketLogger syslog records (type 0xF7: bluetoothd's and CoreBluetooth's own log lines, and
/// the app's when it logs through the Bluetooth subsystem) on the same timeline as the HCI traffic.
///
/// A line that names a peer — its address `AA:BB:CC:DD:EE:FF` (any case, `:` or `-`) or a
/// connection handle (`handle 0x0040`, `Handle: 64`, `hdl=0x40`) — is attached to the connection
/// open with that peer/handle (else the last connection with that address), kept in a bounded
/// per-connection buffer and added to that connection's timeline (at most `maxTimelineLines`).
/// Every line, attached or not, is kept in a bounded ring for "what was logged just before".
///
/// For a finding: `lines(before: finding.time, connection: finding.connectionIndex)` gives the
/// nearest preceding lines of that connection (and unattached ones), newest last, so a report can
/// say "bluetoothd logged X 3 ms before the stall" (see `context(for:)`).
public final class SyslogCorrelator {
    /// One syslog record, decoded (Wireshark `packet-packetlogger.c`: u32 PID little-endian, u8 message
    /// type, then NUL-terminated process, sender, subsystem, category and message).
    public struct Line: Sendable {
        public var frame: Int
        /// µs since the Unix epoch.
        public var time: Int64
        public var pid: UInt32
        /// os_log type (0 default, 1 info, 2 debug, 0x10 error, 0x11 fault).
        public var level: UInt8
        public var process: String
        public var sender: String
        public var subsystem: String
        public var category: String
        public var message: String
        /// `Connection.index` of the connection it names, if any.
        public var connectionIndex: Int?

        /// `bluetoothd[123] <CoreBluetooth:Central> message`.
        public var text: String {
            var s = process.isEmpty ? "syslog" : process
            if !subsystem.isEmpty || !category.isEmpty { s += " <" + [subsystem, category].filter { !$0.isEmpty }.joined(separator: ":") + ">" }
            return s + " " + message
        }
    }

    /// Lines per connection kept for `lines(before:)`.
    public static let maxPerConnection = 200
    /// Lines added to one connection's timeline (the rest stay in `attached`).
    public static let maxTimelineLines = 50
    /// Recent lines of the whole capture.
    public static let maxRecent = 2_000
    /// Longest message kept.
    static let maxMessage = 512
    /// The timeline kind log lines use (a dedicated `.log` kind would be better: see the report).
    static let timelineKind: TimelineEvent.Kind = .signaling

    public private(set) var attached: [Int: [Line]] = [:]
    public private(set) var recent: [Line] = []
    public private(set) var total = 0
    public private(set) var attachedCount = 0
    private var onTimeline: [Int: Int] = [:]

    public init() {}

    // MARK: Feeding

    func consume(_ frame: Frame, session: SessionModel) {
        guard let line = Self.decode(frame) else { return }
        total += 1
        var l = line
        if let c = Self.connection(mentionedIn: l.message, session: session) {
            l.connectionIndex = c.index
            attachedCount += 1
            var list = attached[c.index, default: []]
            if list.count >= Self.maxPerConnection { list.removeFirst(list.count - Self.maxPerConnection + 1) }
            list.append(l)
            attached[c.index] = list
            let n = onTimeline[c.index, default: 0]
            if n < Self.maxTimelineLines {
                onTimeline[c.index] = n + 1
                c.note(l.time, l.frame, Self.timelineKind, .log(l.text))
            }
        }
        if recent.count >= Self.maxRecent { recent.removeFirst(recent.count - Self.maxRecent + 1) }
        recent.append(l)
    }

    /// Decodes a syslog record; nil when it is too short to hold the PID and type.
    public static func decode(_ frame: Frame) -> Line? {
        let b = frame.payload
        // u32 pid, u8 level, then the strings (`LogRecords.syslog`).
        var header = b.reader
        guard let pid = try? header.u32le("PID"), let level = try? header.u8("Level") else { return nil }
        var strings: [String] = []
        var start = header.position
        while strings.count < 5, start < b.count {
            var end = start
            while end < b.count, b[end] != 0 { end += 1 }
            let count = min(end - start, maxMessage)
            strings.append(String(decoding: UnsafeRawBufferPointer(rebasing: b[start ..< start + count]), as: UTF8.self))
            start = end + 1
        }
        while strings.count < 5 { strings.append("") }
        return Line(frame: frame.number, time: frame.timestamp, pid: pid, level: level, process: strings[0], sender: strings[1],
                    subsystem: strings[2], category: strings[3], message: strings[4].trimmingTrailingNewlinesAndSpaces())
    }

    /// The connection a log message names: by peer address, else by handle.
    static func connection(mentionedIn message: String, session: SessionModel) -> Connection? {
        let utf8 = Array(message.utf8)
        for address in AddressInText.addresses(in: utf8) {
            if let c = session.live.values.filter({ $0.peerAddress == address }).min(by: { $0.index < $1.index }) { return c }
            if let c = session.connections.last(where: { $0.peerAddress == address }) { return c }
        }
        for handle in handles(in: utf8) {
            if let c = session.live.values.filter({ $0.handle == handle }).min(by: { $0.index < $1.index }) { return c }
        }
        return nil
    }

    /// Numbers after `handle`/`hdl` (`handle 0x0040`, `Handle: 64`, `connectionHandle=0x40`).
    static func handles(in s: [UInt8]) -> [UInt16] {
        let lower = s.map { $0 | 0x20 }
        var out: [UInt16] = []
        for key in [Array("handle".utf8), Array("hdl".utf8)] {
            var i = 0
            while i + key.count <= lower.count {
                guard Array(lower[i ..< i + key.count]) == key else { i += 1; continue }
                var j = i + key.count
                while j < s.count, s[j] == UInt8(ascii: " ") || s[j] == UInt8(ascii: ":") || s[j] == UInt8(ascii: "=") { j += 1 }
                var value = 0, digits = 0
                if j + 1 < s.count, s[j] == UInt8(ascii: "0"), lower[j + 1] == UInt8(ascii: "x") {
                    j += 2
                    while j < s.count, let d = Hex.digit(s[j]), digits < 4 { value = value << 4 | Int(d); j += 1; digits += 1 }
                } else {
                    while j < s.count, s[j] >= 0x30, s[j] <= 0x39, digits < 4 { value = value * 10 + Int(s[j] - 0x30); j += 1; digits += 1 }
                }
                if digits > 0, value <= 0x0EFF { out.append(UInt16(value)) }
                i = max(j, i + 1)
            }
        }
        return out
    }

    // MARK: Queries

    /// The nearest lines at or before `time` (within `window` µs), newest last: those attached to
    /// `connection` (a `Connection.index`), plus — when `includeUnattached` — lines that name no
    /// connection (bluetoothd's general chatter often explains a stall too).
    public func lines(before time: Int64, connection: Int?, limit: Int = 3, window: Int64 = 5_000_000,
                      includeUnattached: Bool = true) -> [Line] {
        var pool: [Line] = []
        if let connection { pool += attached[connection] ?? [] }
        if includeUnattached || connection == nil { pool += recent.filter { $0.connectionIndex == nil || connection == nil } }
        let hits = pool.filter { $0.time <= time && time - $0.time <= window }.sorted { ($0.time, $0.frame) < ($1.time, $1.frame) }
        return Array(hits.suffix(limit))
    }

    /// For a finding: its nearest preceding log lines, each with how long before the finding it was
    /// logged: `("bluetoothd <…> message", 3_000 µs)`. What the report renderer calls.
    /// True once any syslog line was seen (most captures have none).
    public var hasLines: Bool { !recent.isEmpty || !attached.isEmpty }

    public func context(for finding: Finding, limit: Int = 3) -> [(line: Line, before: Int64)] {
        lines(before: finding.time, connection: finding.connectionIndex, limit: limit).map { ($0, finding.time - $0.time) }
    }
}

extension String {
    func trimmingTrailingNewlinesAndSpaces() -> String {
        var s = Substring(self)
        while let last = s.last, last == "\n" || last == "\r" || last == " " { s.removeLast() }
        return String(s)
    }
}
