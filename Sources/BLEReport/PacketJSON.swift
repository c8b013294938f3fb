import BLEBytes
import BLECapture
import BLEProtocol
import BLEAnalysis

/// One JSON object per frame (`packets --json`, JSON Lines). Stable field names:
/// `frame`, `timestamp` (µs since the Unix epoch), `direction`, `type`, `adapter`, `length`,
/// `originalLength`, `summary`, `layers`, `malformed` (bool), and for malformed frames `reason`
/// and `offset` (absolute byte offset in the file).
public struct PacketJSON {
    public var options: RenderOptions
    public init(options: RenderOptions) { self.options = options }

    public func render(_ frame: Frame, layers: [Layer], status: FrameStatus) -> String {
        var w = JSONWriter()
        w.beginObject()
        w.int("frame", frame.number)
        w.int("timestamp", frame.timestamp)
        w.string("direction", frame.direction.name)
        w.string("type", frame.kind.name)
        w.int("adapter", frame.adapter)
        w.int("offset", frame.recordOffset)
        w.int("length", frame.payload.count)
        w.int("originalLength", frame.originalLength)
        w.bool("captureTruncated", frame.isCaptureTruncated)
        w.string("summary", Self.summary(layers))
        w.bool("malformed", status.isMalformed)
        if case let .malformed(reason, offset) = status {
            w.string("reason", reason)
            w.int("errorOffset", offset)
            w.string("raw", Hex.string(frame.payload, separator: ""))
        }
        w.beginArray("layers")
        for layer in layers {
            w.beginObject()
            w.string("protocol", layer.protocolName.description)
            w.string("name", layer.name)
            if !layer.code.isEmpty { w.string("code", layer.code) }
            if let n = layer.length { w.int("length", n) }
            w.beginArray("fields")
            fields(layer.fields, &w)
            w.endArray()
            if !layer.notes.isEmpty {
                w.beginArray("notes")
                for n in layer.notes { w.string(nil, n) }
                w.endArray()
            }
            if let e = layer.error { w.string("error", e.description) }
            w.endObject()
        }
        w.endArray()
        w.endObject()
        return w.output
    }

    /// The frame in a few words: the innermost layer's protocol and name.
    public static func summary(_ layers: [Layer]) -> String {
        guard let last = layers.last else { return "" }
        if last.name.isEmpty { return last.protocolName.description }
        return "\(last.protocolName): \(last.name)"
    }

    func fields(_ list: [Field], _ w: inout JSONWriter) {
        let text = FieldText(options: options)
        var lastAddressType: LEAddressType? = nil   // as the text shows it: a type field before its address
        for f in list {
            w.beginObject()
            w.string("name", f.nameString)
            switch f.value {
            case let .integer(v, format):
                w.int("value", v)
                w.string("text", FieldText.integer(v, format))
                if f.id.isAddressType { lastAddressType = LEAddressType(rawValue: UInt8(truncatingIfNeeded: v)) }
            case let .address(a, type):
                w.string("value", a.description)
                if let type { w.string("addressType", type.name) }
                if let vendor = OUI.vendorBytes(a, type: type ?? lastAddressType, id: f.id) {
                    w.string("vendor", String(decoding: vendor, as: UTF8.self))
                }
            case let .bytes(b):
                w.string("value", Hex.string(b, separator: ""))
            case let .text(t), let .note(t):
                w.string("value", t)
            case let .problem(e):
                w.string("value", e.description)
            case .secret:
                w.string("value", text.value(f.value))
            case let .group(children):
                w.beginArray("fields")
                fields(children, &w)
                w.endArray()
            case let .list(items):
                w.beginArray("items")
                for item in items {
                    w.beginArray(nil)
                    fields(item, &w)
                    w.endArray()
                }
                w.endArray()
            }
            w.endObject()
        }
    }
}
