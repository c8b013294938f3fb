import BLEBytes
import BLECapture
import BLEProtocol
import BLEAnalysis

/// btmon-style text for one frame: a title line with direction glyph (`<` host → controller,
/// `>` controller → host, `=` log, `*` malformed), the frame number, adapter and time on the
/// right, then the fields indented 8 columns plus 2 per nesting level.
public struct PacketText {
    public var options: RenderOptions
    /// Column where the `#frame [hciN] time` block ends.
    public var width: Int

    public init(options: RenderOptions, width: Int = 110) {
        self.options = options
        self.width = width
    }

    public func render(_ frame: Frame, layers: [Layer], status: FrameStatus, into out: inout String) {
        let fieldText = FieldText(options: options)
        let glyph: String = frame.kind.isHCI ? String(frame.direction.glyph) : "="
        for (i, layer) in layers.enumerated() {
            let indent = 8 + 2 * max(0, i - 1)
            if i == 0 {
                let title = glyph + " " + Self.title(layer, frame: frame)
                let right = "#\(frame.number) [hci\(frame.adapter)] " + TimeFormat.dateTime(frame.timestamp)
                let gap = max(2, width - title.count - right.count)
                out += title + String(repeating: " ", count: gap) + right + "\n"
            } else {
                out += String(repeating: " ", count: indent - 2) + Self.title(layer, frame: frame) + "\n"
            }
            fieldText.render(layer.fields, indent: indent, into: &out)
            for note in layer.notes { out += String(repeating: " ", count: indent) + "Note: " + note + "\n" }
            if let error = layer.error, !status.isMalformed {
                out += String(repeating: " ", count: indent) + "* Malformed: " + error.description + "\n"
            }
        }
        if frame.isCaptureTruncated {
            out += "        Note: capture kept \(frame.payload.count) of \(frame.originalLength) bytes (truncated by the capture, not the protocol)\n"
        }
        if case let .malformed(reason, offset) = status {
            out += "        * Malformed frame \(frame.number): \(reason) (file offset \(offset))\n"
            hexdump(frame.payload, into: &out)
        }
    }

    /// `HCI Command: LE Set Scan Parameters (0x08|0x000b) plen 7`, `ACL Data TX: Handle 64 flags 0x02 dlen 11`.
    public static func title(_ layer: Layer, frame: Frame) -> String {
        switch layer.protocolName.description {
        case "ACL Data", "SCO Data", "ISO Data":
            let dir = frame.direction == .sent ? "TX" : frame.direction == .received ? "RX" : "?"
            var handle = "", flags = ""
            for f in layer.fields {
                if f.nameString == "Handle", case let .integer(v, _) = f.value { handle = String(v) }
                if f.nameString == "Packet Boundary", case let .integer(v, _) = f.value { flags = "0x" + Hex.pad(v, 2) }
            }
            return "\(layer.protocolName) \(dir): Handle \(handle)" + (flags.isEmpty ? "" : " flags \(flags)")
                + (layer.length.map { " dlen \($0)" } ?? "")
        default:
            var s = "\(layer.protocolName): \(layer.name)"
            if !layer.code.isEmpty { s += " (\(layer.code))" }
            if let n = layer.length { s += (layer.protocolName.description.hasPrefix("HCI") ? " plen " : " len ") + String(n) }
            return s
        }
    }

    func hexdump(_ bytes: UnsafeRawBufferPointer, into out: inout String) {
        var i = 0
        while i < bytes.count {
            out += "        " + Hex.string(bytes[i ..< min(i + 16, bytes.count)]) + "\n"
            i += 16
        }
    }
}
