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
    /// - Parameter vendor: the maker of the frame's controller (`ControllerVendors`), to name its vendor commands.
    public static func decode(_ frame: Frame, vendor: HCIVendor? = nil, into layers: inout [Layer]) {
        if frame.problem == nil, frame.kind == .airLE {
            layers += LinkLayerDisplay.layers(linkType: UInt32(frame.rawType), frame.payload, base: frame.payloadOffset)
        } else {
            layers.append(layer(frame, vendor: vendor))
        }
    }

    /// The one layer of every frame but an air packet.
    private static func layer(_ frame: Frame, vendor: HCIVendor?) -> Layer {
        var r = ByteReader(frame.payload, base: frame.payloadOffset)
        if frame.problem != nil {
            return LogRecords.raw("Raw \(frame.kind.name) record", &r)
        }
        if let type = frame.kind.hciPacketType {
            return HCIDecoder.decode(type, &r, originalLength: frame.originalLength, vendor: vendor)
        }
        switch frame.kind {
        case .indexNew: return LogRecords.newIndex(&r)
        case .indexDeleted: return LogRecords.index("Delete Index")
        case .indexOpen: return LogRecords.index("Open Index")
        case .indexClosed: return LogRecords.index("Close Index")
        case .indexInfo: return LogRecords.indexInfo(&r)
        case .systemNote: return LogRecords.text("System Note", &r)
        case .userLogging: return LogRecords.userLogging(&r)
        case .vendorDiagnostic: return LogRecords.raw(FrameKind.h4DiagnosticName(frame.rawType) ?? "Vendor Diagnostic", &r)
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

/// Which maker's vendor commands apply, per adapter (`packets`): learnt from the manufacturer in
/// a successful Read Local Version Information, or a Linux monitor's Index Info record, earlier in
/// the capture. A few byte tests per frame; the answer is nil for frames no vendor table names.
public struct ControllerVendors {
    private var byAdapter: [(adapter: UInt16, vendor: HCIVendor?)] = []

    public init() {}

    /// Notes the manufacturer a frame reports, if it reports one.
    public mutating func observe(_ frame: Frame) {
        guard frame.problem == nil else { return }
        let manufacturer: UInt16?
        switch frame.kind {
        case .event: manufacturer = HCIVendor.manufacturer(inEvent: frame.payload)
        case .indexInfo:   // BD_ADDR, then the manufacturer (`LogRecords.indexInfo`)
            manufacturer = LogRecords.indexInfoManufacturer(frame.payload.reader)
        default: manufacturer = nil
        }
        guard let manufacturer else { return }
        let vendor = HCIVendor(manufacturer: manufacturer)
        if let i = byAdapter.firstIndex(where: { $0.adapter == frame.adapter }) {
            byAdapter[i].vendor = vendor
        } else {
            byAdapter.append((frame.adapter, vendor))
        }
    }

    /// The maker whose names the frame needs: set only for vendor commands and their Command
    /// Complete / Status, on an adapter whose maker is known.
    public func vendor(for frame: Frame) -> HCIVendor? {
        guard !byAdapter.isEmpty, frame.problem == nil, frame.kind == .command || frame.kind == .event,
              HCIVendor.concerns(frame.payload, isCommand: frame.kind == .command) else { return nil }
        return byAdapter.first(where: { $0.adapter == frame.adapter })?.vendor
    }
}
