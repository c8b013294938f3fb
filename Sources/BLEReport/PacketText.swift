import BLEBytes
import BLECapture
import BLEProtocol
import BLEAnalysis

/// btmon-style text for one frame: a title line with direction glyph (`<` host → controller,
/// `>` controller → host, `=` log, `*` malformed), the frame number, adapter and time on the
/// right, then the fields indented 8 columns plus 2 per nesting level.
public struct PacketText: Sendable {
    public var options: RenderOptions
    /// Column where the `#frame [hciN] time` block ends.
    public var width: Int

    public init(options: RenderOptions, width: Int = 110) {
        self.options = options
        self.width = width
    }

    public func render(_ frame: Frame, layers: [Layer], status: FrameStatus, into out: inout String) {
        var b = TextBuffer(capacity: 512)
        var clock = ClockCache()
        render(frame, layers: layers, status: status, into: &b, clock: &clock)
        out += b.string
    }

    /// The fast path (`packets`): bytes appended to `out`; `clock` caches the date part of timestamps.
    public func render(_ frame: Frame, layers: [Layer], status: FrameStatus, into out: inout TextBuffer, clock: inout ClockCache) {
        let fieldText = FieldText(options: options)
        for i in layers.indices {   // by index: `enumerated()` copies each layer (a retain per array it holds)
            let indent = 8 + 2 * max(0, i - 1)
            if i == 0 {
                let lineStart = out.count
                out.byte(frame.kind.isHCI ? Self.glyph(frame.direction) : 0x3D)
                out.byte(0x20)
                Self.title(layers[i], frame: frame, into: &out)
                let titleEnd = out.count
                let titleWidth = out.columns(from: lineStart)
                // The right-hand block is written first, then the padding slid in before it.
                out.byte(0x23); out.decimal(frame.number); out.append(" [hci"); out.decimal(Int(frame.adapter)); out.append("] ")
                clock.append(frame.timestamp, into: &out)
                let pad = max(2, width - titleWidth - (out.count - titleEnd))
                out.insertSpaces(pad, at: titleEnd)
                out.newline()
            } else {
                out.spaces(indent - 2)
                Self.title(layers[i], frame: frame, into: &out)
                out.newline()
            }
            fieldText.render(layers[i].fields, indent: indent, into: &out)
            for note in layers[i].notes { out.spaces(indent); out.append("Note: "); out.append(note); out.newline() }
            if let error = layers[i].error, !status.isMalformed {
                out.spaces(indent); out.append("* Malformed: "); out.append(error.description); out.newline()
            }
        }
        if frame.isCaptureTruncated {
            out.append("        Note: capture kept "); out.decimal(frame.payload.count); out.append(" of ")
            out.decimal(frame.originalLength); out.append(" bytes (truncated by the capture, not the protocol)\n")
        }
        if case let .malformed(reason, offset) = status {
            out.append("        * Malformed frame "); out.decimal(frame.number); out.append(": "); out.append(reason)
            out.append(" (file offset "); out.decimal(offset); out.append(")\n")
            var i = 0
            while i < frame.payload.count {
                out.spaces(8); out.hexBytes(frame.payload[i ..< min(i + 16, frame.payload.count)]); out.newline()
                i += 16
            }
        }
    }

    static func glyph(_ d: Direction) -> UInt8 {
        switch d { case .sent: 0x3C; case .received: 0x3E; case .unknown: 0x3D }
    }

    /// `HCI Command: LE Set Scan Parameters (0x08|0x000b) plen 7`, `ACL Data TX: Handle 64 flags 0x02 dlen 11`.
    public static func title(_ layer: Layer, frame: Frame) -> String {
        var b = TextBuffer(capacity: 64)
        title(layer, frame: frame, into: &b)
        return b.string
    }

    public static func title(_ layer: Layer, frame: Frame, into out: inout TextBuffer) {
        let proto = layer.protocolName
        let isData = proto.utf8CodeUnitCount == 8 && (proto.utf8Start[4] == 0x44) && (proto.utf8Start[0] == 0x41 || proto.utf8Start[0] == 0x53 || proto.utf8Start[0] == 0x49)
        if isData {   // "ACL Data", "SCO Data", "ISO Data"
            out.append(proto)
            out.append(frame.direction == .sent ? " TX: Handle " : frame.direction == .received ? " RX: Handle " : " ?: Handle ")
            for f in layer.fields {
                if case let .integer(v, _) = f.value {
                    if f.nameIs("Handle") { out.decimal(v) }
                }
            }
            for f in layer.fields where f.nameIs("Packet Boundary") {
                if case let .integer(v, _) = f.value { out.append(" flags 0x"); out.hex(v, width: 2) }
            }
            if let n = layer.length { out.append(" dlen "); out.decimal(n) }
            return
        }
        out.append(proto); out.append(": "); out.append(layer.name)
        if !layer.code.isEmpty { out.append(" ("); out.append(layer.code); out.byte(0x29) }
        if let n = layer.length {
            let hci = proto.utf8CodeUnitCount >= 3 && proto.utf8Start[0] == 0x48 && proto.utf8Start[1] == 0x43 && proto.utf8Start[2] == 0x49
            out.append(hci ? " plen " : " len "); out.decimal(n)
        }
    }
}

/// Formats timestamps as `2026-11-21 20:15:02.123456`, computing the date and time-of-day text
/// once per second of capture rather than per frame.
public struct ClockCache {
    private var second: Int64 = .min
    private var prefix: [UInt8] = []

    public init() {}

    public mutating func append(_ micros: Int64, into out: inout TextBuffer) {
        var s = micros / 1_000_000
        var us = micros % 1_000_000
        if us < 0 { us += 1_000_000; s -= 1 }
        if s != second {
            second = s
            let text = TimeFormat.dateTime(s * 1_000_000)   // "YYYY-MM-DD HH:MM:SS.000000"
            prefix = Array(text.utf8.dropLast(6))
        }
        out.append(prefix)
        let start = out.count
        for _ in 0 ..< 6 { out.byte(0x30) }
        var v = us
        for i in stride(from: start + 5, through: start, by: -1) { out[i] = 0x30 &+ UInt8(v % 10); v /= 10 }   // safe: digit
    }
}
