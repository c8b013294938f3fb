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
    /// ANSI colours on the title lines (a terminal, or `--color=always`): see `PacketColour`.
    public var colour: Bool

    public init(options: RenderOptions, width: Int = 110, colour: Bool = false) {
        self.options = options
        self.width = width
        self.colour = colour
    }

    public func render(_ frame: Frame, layers: [Layer], status: FrameStatus, into out: inout String) {
        var b = TextBuffer(capacity: 512)
        var clock = ClockCache()
        render(frame, layers: layers, status: status, into: &b, clock: &clock)
        out += b.string
    }

    /// Bytes appended to `out`; `clock` caches the date part of timestamps.
    public func render(_ frame: Frame, layers: [Layer], status: FrameStatus, into out: inout TextBuffer, clock: inout ClockCache) {
        var flat = FlatLayers()
        let range = flat.append(layers)
        flat.withView { render(frame, $0, entries: range, status: status, into: &out, clock: &clock) }
    }

    /// The fast path (`packets`): the frame's layers as flattened by `FlatLayers`, at `entries` of `view`.
    /// `head`, when given, holds the frame's first layers (decoded where it is rendered).
    public func render(_ frame: Frame, head: (view: FlatLayers.View, entries: Range<Int>)? = nil,
                       _ view: FlatLayers.View, entries: Range<Int>, status: FrameStatus,
                       into out: inout TextBuffer, clock: inout ClockCache) {
        var index = 0
        if let head {
            var i = head.entries.lowerBound
            while i < head.entries.upperBound {
                i = renderLayer(head.view, at: i, index: index, frame: frame, status: status, into: &out, clock: &clock)
                index += 1
            }
        }
        var i = entries.lowerBound
        while i < entries.upperBound {
            i = renderLayer(view, at: i, index: index, frame: frame, status: status, into: &out, clock: &clock)
            index += 1
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

    /// The layer at entry `i`, the `index`th of the frame: the frame's title line (layer 0) or the
    /// layer's own title, then its fields, notes and error. Returns the entry after the layer.
    private func renderLayer(_ view: FlatLayers.View, at i: Int, index: Int, frame: Frame, status: FrameStatus,
                             into out: inout TextBuffer, clock: inout ClockCache) -> Int {
        guard case let .layer(_, _, _, _, fields, notes, error) = view.entries[i] else { return i + 1 }   // not made by FlatLayers
        let indent = 8 + 2 * max(0, index - 1)
        if index == 0 {
            let glyph = Self.glyph(frame)
            if colour { out.append(PacketColour.title(glyph: glyph, malformed: status.isMalformed)) }
            let lineStart = out.count
            out.byte(glyph)
            out.byte(0x20)
            Self.title(view, at: i, frame: frame, into: out)
            let titleTextEnd = out.count
            var titleWidth = out.columns(from: lineStart)
            if colour { out.append(PacketColour.reset) }
            var titleEnd = out.count
            // The right-hand block is written first, then the padding slid in before it.
            if colour { out.append(PacketColour.frameNumber) }
            let blockStart = out.count
            out.byte(0x23); out.decimal(frame.number)
            // Relative times are btmon's compact block, `#12 0.003372`: the adapter only when not hci0.
            // 0xFFFF: no controller (system notes, user logging, mgmt to no index), as btmon leaves it out.
            if (clock.origin == nil || frame.adapter != 0) && frame.adapter != 0xFFFF {
                out.append(" [hci"); out.decimal(Int(frame.adapter)); out.byte(0x5D)
            }
            out.byte(0x20)
            var blockWidth = out.count - blockStart
            if colour { out.append(PacketColour.time) }
            let timeStart = out.count
            clock.append(frame.timestamp, into: &out)
            blockWidth += out.count - timeStart
            if colour { out.append(PacketColour.reset) }
            if clock.origin != nil, titleWidth + 2 + blockWidth > width,   // relative times: fit the line as btmon does
               let cut = Self.nameCut(out, title: lineStart ..< titleTextEnd, excess: titleWidth + 2 + blockWidth - width) {
                out.elide(cut)
                titleEnd -= cut.count - 2
                titleWidth -= cut.count - 2
            }
            let pad = max(2, width - titleWidth - blockWidth)
            out.insertSpaces(pad, at: titleEnd)
            out.newline()
        } else {
            out.spaces(indent - 2)
            Self.title(view, at: i, frame: frame, into: out)
            out.newline()
        }
        var next = FieldText(options: options).render(view, fieldsAt: i + 1, count: fields, indent: indent, into: &out)
        for _ in 0 ..< notes {
            if case let .note(t) = view.entries[next] { out.spaces(indent); out.append("Note: "); out.append(view[t]); out.newline() }
            next += 1
        }
        if let error, !status.isMalformed {
            out.spaces(indent); out.append("* Malformed: "); out.append(view[error]); out.newline()
        }
        return next
    }

    /// btmon's glyphs: `<` `>` for HCI by direction, `@` for BlueZ management traffic, `=` for other records.
    static func glyph(_ frame: Frame) -> UInt8 {
        if frame.kind.isHCI { return glyph(frame.direction) }
        switch frame.kind {
        case .controlOpen, .controlClose, .controlCommand, .controlEvent: return 0x40
        default: return 0x3D
        }
    }

    /// The end of the name in a title `Proto: Name (0x…) …`, `excess` columns plus two for the `..`
    /// that replaces them; nil when the title has no such name, it is not ASCII, or fewer than 8 of
    /// its characters would be left.
    static func nameCut(_ out: TextBuffer, title: Range<Int>, excess: Int) -> Range<Int>? {
        var nameStart: Int? = nil
        var codeStart: Int? = nil
        var i = title.lowerBound
        while i + 3 < title.upperBound {
            if nameStart == nil, out[i] == 0x3A, out[i + 1] == 0x20 { nameStart = i + 2 }   // ": "
            if out[i] == 0x20, out[i + 1] == 0x28, out[i + 2] == 0x30, out[i + 3] == 0x78 { codeStart = i }   // " (0x", the last
            i += 1
        }
        guard let nameStart, let codeStart, codeStart - nameStart - (excess + 2) >= 8 else { return nil }
        for j in nameStart ..< codeStart where out[j] >= 0x80 { return nil }
        var cutStart = codeStart - (excess + 2)
        while cutStart > nameStart + 8, out[cutStart - 1] == 0x20 { cutStart -= 1 }   // "Accept List.." not "List .."
        return cutStart ..< codeStart
    }

    static func glyph(_ d: Direction) -> UInt8 {
        switch d { case .sent: 0x3C; case .received: 0x3E; case .unknown: 0x3D }
    }

    /// `HCI Command: LE Set Scan Parameters (0x08|0x000b) plen 7`, `ACL Data TX: Handle 64 flags 0x02 dlen 11`.
    public static func title(_ layer: Layer, frame: Frame) -> String {
        var flat = FlatLayers()
        flat.append([layer])
        let b = TextBuffer(capacity: 64)
        flat.withView { view in title(view, at: 0, frame: frame, into: b) }
        return b.string
    }

    /// The value of the first integer field `id` among the `fields` fields of the layer at entry `i`.
    private static func topLevelInteger(_ id: FieldID, of view: FlatLayers.View, layerAt i: Int, fields: Int) -> UInt64? {
        var j = i + 1
        for _ in 0 ..< fields {
            if case let .field(_, fieldID, .integer(v, _)) = view.entries[j], fieldID == id { return v }
            j = view.next(after: j)
        }
        return nil
    }

    /// The title of the layer at entry `i`.
    static func title(_ view: FlatLayers.View, at i: Int, frame: Frame, into out: TextBuffer) {
        guard case let .layer(proto, name, code, length, fields, _, _) = view.entries[i] else { return }
        let isData = proto.utf8CodeUnitCount == 8 && (proto.utf8Start[4] == 0x44) && (proto.utf8Start[0] == 0x41 || proto.utf8Start[0] == 0x53 || proto.utf8Start[0] == 0x49)
        if isData {   // "ACL Data", "SCO Data", "ISO Data"
            out.append(proto)
            out.append(frame.direction == .sent ? " TX: Handle " : frame.direction == .received ? " RX: Handle " : " ?: Handle ")
            if let v = topLevelInteger(.connectionHandle, of: view, layerAt: i, fields: fields) { out.decimal(v) }
            if let v = topLevelInteger(.packetBoundary, of: view, layerAt: i, fields: fields) { out.append(" flags 0x"); out.hex(v, width: 2) }
            if let length { out.append(" dlen "); out.decimal(length) }
            return
        }
        if proto.utf8CodeUnitCount == 0 { out.append(view[name]); return }   // a one-line record (`Layer.line`)
        out.append(proto); out.append(": "); out.append(view[name])
        if code.count > 0 { out.append(" ("); out.append(view[code]); out.byte(0x29) }
        if let length {
            // "HCI Command", "HCI Event", "MGMT Command", "MGMT Event": btmon's `plen`.
            let first = proto.utf8CodeUnitCount >= 4 ? proto.utf8Start[0] : 0
            let plen = (first == 0x48 && proto.utf8Start[1] == 0x43 && proto.utf8Start[2] == 0x49)
                || (first == 0x4D && proto.utf8Start[1] == 0x47 && proto.utf8Start[2] == 0x4D)
            out.append(plen ? " plen " : " len "); out.decimal(length)
        }
    }
}

/// Formats timestamps as `2026-11-21 20:15:02.123456`, computing the date and time-of-day text
/// once per second of capture rather than per frame; or, with `origin` set (`packets -t`), as
/// seconds since it: `12.345678`.
public struct ClockCache {
    private var second: Int64 = .min
    private var prefix: [UInt8] = []
    /// The capture's first timestamp, for relative times; nil for dates and times of day.
    public var origin: Int64?

    public init(origin: Int64? = nil) { self.origin = origin }

    public mutating func append(_ micros: Int64, into out: inout TextBuffer) {
        if let origin {
            let offset = micros - origin
            if offset < 0 { out.byte(0x2D) }   // a clock that went back: "-0.000100"
            out.decimal(offset.magnitude / 1_000_000); out.byte(0x2E); out.decimal(offset.magnitude % 1_000_000, width: 6)
            return
        }
        var s = micros / 1_000_000
        var us = micros % 1_000_000
        if us < 0 { us += 1_000_000; s -= 1 }
        if s != second {
            second = s
            let text = TimeFormat.dateTime(s * 1_000_000)   // "YYYY-MM-DD HH:MM:SS.000000"
            prefix = Array(text.utf8.dropLast(6))
        }
        out.append(prefix)
        out.decimal(UInt64(us), width: 6)
    }
}
