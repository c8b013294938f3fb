import BLEBytes
import BLECapture
import BLEProtocol

/// Decodes a frame into display layers (for `packets`): HCI through the decoding tables, log
/// records by kind. Stateless; the session context (GATT names, reassembly) is added by the caller.
public enum FrameLayers {
    public static func decode(_ frame: Frame) -> [Layer] {
        var layers: [Layer] = []
        decode(frame, into: &layers)
        return layers
    }

    /// `decode(_:)` appending to `layers` (the packet list builds each frame's layers in one array).
    public static func decode(_ frame: Frame, into layers: inout [Layer]) {
        if frame.problem == nil, frame.kind == .airLE {
            layers += LinkLayerDisplay.layers(linkType: UInt32(frame.rawType), frame.payload, base: frame.payloadOffset)
        } else {
            layers.append(layer(frame))
        }
    }

    /// The one layer of every frame but an air packet.
    private static func layer(_ frame: Frame) -> Layer {
        var r = ByteReader(frame.payload, base: frame.payloadOffset)
        if frame.problem != nil {
            return LogRecords.raw("Raw \(frame.kind.name) record", &r)
        }
        if let type = frame.kind.hciPacketType {
            return HCIDecoder.decode(type, &r, originalLength: frame.originalLength)
        }
        switch frame.kind {
        case .indexNew: return LogRecords.newIndex(&r)
        case .indexDeleted: return Layer(protocolName: "Log", name: "Delete Index", code: "")
        case .indexOpen: return Layer(protocolName: "Log", name: "Open Index", code: "")
        case .indexClosed: return Layer(protocolName: "Log", name: "Close Index", code: "")
        case .indexInfo: return LogRecords.indexInfo(&r)
        case .systemNote: return LogRecords.text("System Note", &r)
        case .userLogging: return LogRecords.userLogging(&r)
        case .vendorDiagnostic: return LogRecords.raw("Vendor Diagnostic", &r)
        case .controlOpen: return Mgmt.open(&r)
        case .controlClose: return Mgmt.close(&r)
        case .controlCommand: return Mgmt.command(&r)
        case .controlEvent: return Mgmt.event(&r)
        case .syslog: return LogRecords.syslog(&r)
        case .note: return LogRecords.text("Note", &r)
        case .power: return LogRecords.text("Power", &r)
        case .newController: return LogRecords.raw("New Controller", &r)
        case .vendor: return LogRecords.raw("Vendor record 0x\(Hex.pad(frame.rawType, 2))", &r)
        default: return LogRecords.raw("Unknown record", &r)
        }
    }
}
