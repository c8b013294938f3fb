import BLEBytes
import BLECapture
import BLEProtocol
import BLEAnalysis

/// Everything `info` reports about a capture after one pass.
public struct CaptureFacts {
    public var path: String
    public var info: CaptureInfo
    public var summary: ReadSummary
    public var statistics: CaptureStatistics
    public var adapters: [AdapterInfo]

    public init(path: String, info: CaptureInfo, summary: ReadSummary, analyzer: Analyzer) {
        self.path = path
        self.info = info
        self.summary = summary
        self.statistics = analyzer.statistics
        self.adapters = analyzer.adapters.values.sorted { $0.index < $1.index }
    }
}

/// Text and JSON for `bleanalyze info`.
public enum InfoRenderer {
    /// The `info --json` object. Interface other tools rely on: `format`, `datalink`, `frames`,
    /// `malformed`, `truncated`, `att` (opcode "0x1b" → count).
    public static func json(_ f: CaptureFacts) -> String {
        var w = JSONWriter()
        w.beginObject()
        w.string("file", f.path)
        w.string("format", f.info.format.rawValue)
        w.int("datalink", f.info.datalink)
        w.string("datalinkName", f.info.datalinkName)
        w.bool("compressed", f.info.compressed)
        if f.info.format == .packetlogger { w.string("byteOrder", f.info.bigEndian ? "big-endian" : "little-endian") }
        w.int("fileSize", f.info.fileSize)
        w.int("frames", f.summary.frames)
        w.int("malformed", f.statistics.malformed)
        w.bool("truncated", f.summary.truncated)
        w.int("captureTruncatedFrames", f.statistics.captureTruncated)
        w.optional("firstTimestamp", f.summary.firstTimestamp)
        w.optional("lastTimestamp", f.summary.lastTimestamp)
        if let a = f.summary.firstTimestamp, let b = f.summary.lastTimestamp {
            w.double("durationSeconds", Double(b - a) / 1e6)
        } else {
            w.null("durationSeconds")
        }
        if let reason = f.info.notDecodedReason { w.string("notDecoded", reason) }
        w.beginObject("packetTypes")
        for kind in FrameKind.allCases where f.statistics.count(kind) > 0 { w.int(JSONKey(kind.name), f.statistics.count(kind)) }
        w.endObject()
        w.beginObject("att")
        for (op, n) in f.statistics.attOpcodes.enumerated() where n > 0 { w.int(JSONKey(Hex.code(op, 2)), n) }
        w.endObject()
        w.beginObject("attNames")   // the same keys → the opcode's name in Core v5.4 Vol 3 Part F 3.4.8
        for (op, n) in f.statistics.attOpcodes.enumerated() where n > 0 { w.string(JSONKey(Hex.code(op, 2)), attName(op)) }
        w.endObject()
        w.beginArray("adapters")
        for a in f.adapters {
            w.beginObject()
            w.int("index", a.index)
            w.optional("address", a.address)
            w.optional("name", a.name)
            w.optional("bus", a.bus)
            w.optional("manufacturer", a.manufacturer)
            w.endObject()
        }
        w.endArray()
        w.beginArray("issues")
        for i in f.summary.issues {
            w.beginObject()
            w.int("frame", i.frameNumber)
            w.int("offset", i.offset)
            w.string("message", i.description)
            w.endObject()
        }
        w.endArray()
        w.beginArray("malformedFrames")
        for m in f.statistics.malformedExamples {
            w.beginObject()
            w.int("frame", m.frame)
            w.int("offset", m.offset)
            w.string("reason", m.reason)
            w.endObject()
        }
        w.endArray()
        w.endObject()
        return w.output
    }

    public static func text(_ f: CaptureFacts) -> String {
        var s = ""
        func row(_ k: String, _ v: String) { s += k.padding(18) + v + "\n" }
        row("File", f.path)
        var format = f.info.format.rawValue
        if f.info.format == .packetlogger { format += f.info.bigEndian ? " (big-endian)" : " (little-endian)" }
        if f.info.compressed { format += ", gzip-compressed" }
        row("Format", format)
        row("Datalink", "\(f.info.datalink) \(f.info.datalinkName)")
        if let reason = f.info.notDecodedReason { row("Decoding", reason) }
        if let origin = f.info.fieldLog { row("From", origin.summary) }
        row("Frames", "\(f.summary.frames)" + (f.summary.truncated ? " (the file ends inside a record)" : ""))
        row("Malformed", "\(f.statistics.malformed)")
        if f.statistics.captureTruncated > 0 { row("Cut by capture", "\(f.statistics.captureTruncated) frames kept fewer bytes than were sent") }
        if let a = f.summary.firstTimestamp, let b = f.summary.lastTimestamp {
            row("First frame", TimeFormat.dateTime(a) + " UTC")
            row("Last frame", TimeFormat.dateTime(b) + " UTC")
            row("Span", TimeFormat.duration(b - a))
        }
        for a in f.adapters {
            var parts = ["hci\(a.index)"]
            if let v = a.address { parts.append(v) }
            if let v = a.name { parts.append(v) }
            if let v = a.bus { parts.append(v) }
            if let v = a.manufacturer { parts.append(v) }
            row("Adapter", parts.joined(separator: "  "))
        }
        s += "Packet types\n"
        for kind in FrameKind.allCases where f.statistics.count(kind) > 0 {
            s += "  " + kind.name.padding(16) + String(f.statistics.count(kind)) + "\n"
        }
        let att = f.statistics.attOpcodes.enumerated().filter { $0.element > 0 }
        if !att.isEmpty {
            s += "ATT opcodes\n"
            for (op, n) in att { s += "  0x" + Hex.pad(op, 2) + " " + attName(op) + ": " + String(n) + "\n" }
        }
        for i in f.summary.issues { s += "Issue: \(i)\n" }
        for m in f.statistics.malformedExamples.prefix(10) {
            s += "Malformed: frame \(m.frame) at offset \(m.offset): \(m.reason)\n"
        }
        return s
    }
}

/// `Handle Value Notification`, or `Unknown` for an opcode the ATT table has no row for.
func attName(_ op: Int) -> String { ATTOpcode(UInt8(truncatingIfNeeded: op)).name }

extension String {
    /// Left-aligned in a column of `width` characters.
    func padding(_ width: Int) -> String {
        count >= width ? self + " " : self + String(repeating: " ", count: width - count)
    }
}
