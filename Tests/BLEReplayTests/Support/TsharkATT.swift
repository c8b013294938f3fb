import Foundation
import TestSupport

/// What tshark decodes from a capture's ATT frames: the independent oracle for the twin tests.
/// Rows come from `tshark -r FILE -Y FILTER -T fields -e …` (one line per frame, multi-valued
/// fields comma-separated).
enum TsharkATT {
    static var available: Bool { Tool.available("tshark", ["-v"]) }

    struct Service: Hashable, CustomStringConvertible { var handle: Int; var end: Int; var uuid: String
        var description: String { "0x\(String(handle, radix: 16))…0x\(String(end, radix: 16)) \(uuid)" } }
    struct Characteristic: Hashable, CustomStringConvertible { var value: Int; var properties: Int; var uuid: String
        var description: String { "0x\(String(value, radix: 16)) props 0x\(String(properties, radix: 16)) \(uuid)" } }
    struct Descriptor: Hashable, CustomStringConvertible { var handle: Int; var uuid: String
        var description: String { "0x\(String(handle, radix: 16)) \(uuid)" } }
    struct ValuePDU: Hashable { var frame: Int; var opcode: Int; var handle: Int; var value: String; var sent: Bool }

    static func rows(_ file: String, _ filter: String, _ fields: [String]) -> [[String]] {
        let out = Tool.run("tshark", ["-r", file, "-Y", filter, "-T", "fields"] + fields.flatMap { ["-e", $0] }) ?? ""
        return out.split(separator: "\n").map { $0.split(separator: "\t", omittingEmptySubsequences: false).map(String.init) }
    }

    static func list(_ field: String) -> [String] { field.isEmpty ? [] : field.split(separator: ",").map(String.init) }
    static func int(_ text: String) -> Int { Int(text.hasPrefix("0x") ? String(text.dropFirst(2)) : text, radix: text.hasPrefix("0x") ? 16 : 10) ?? -1 }
    /// 16-bit UUIDs as 0xnnnn, 128-bit ones lower-case big-endian hex without dashes (the form the
    /// central prints). tshark prints a 128-bit `btatt.uuid128` in wire (little-endian) byte order.
    static func uuid(_ text: String, wireOrder: Bool = false) -> String {
        let t = text.lowercased().replacingOccurrences(of: "-", with: "").replacingOccurrences(of: ":", with: "")
        guard wireOrder, t.count == 32 else { return t }
        let bytes = stride(from: 0, to: 32, by: 2).map { t[t.index(t.startIndex, offsetBy: $0) ..< t.index(t.startIndex, offsetBy: $0 + 2)] }
        return bytes.reversed().joined()
    }

    /// The frames of the first connection to `address` (LE Enhanced Connection Complete to the next
    /// Disconnection Complete of its handle), as a display filter.
    static func firstConnection(_ file: String, to address: String, handle: String) -> String {
        let open = rows(file, "bthci_evt.le_meta_subevent == 0x0a && bthci_evt.bd_addr == \(address)", ["frame.number"]).first.map { int($0[0]) } ?? 0
        let close = rows(file, "bthci_evt.code == 0x05 && bthci_evt.connection_handle == \(handle) && frame.number > \(open)", ["frame.number"])
            .first.map { int($0[0]) } ?? Int.max
        return "bthci_acl.chandle == \(handle) && frame.number > \(open) && frame.number < \(close)"
    }

    /// Services from the Read By Group Type Responses.
    static func services(_ file: String, direction: String, and extra: String = "frame") -> Set<Service> {
        var out = Set<Service>()
        // btatt.uuid16 lists the entries' UUIDs, then the request's group type (0x2800) tshark adds.
        for r in rows(file, "btatt.opcode == 0x11 && hci_h4.direction == \(direction) && \(extra)", ["btatt.handle", "btatt.group_end_handle", "btatt.uuid16", "btatt.uuid128"]) where r.count >= 4 {
            let handles = list(r[0]), ends = list(r[1]), uuids = list(r[3]).isEmpty ? list(r[2]) : list(r[3]).map { uuid($0, wireOrder: true) }
            for i in 0 ..< min(handles.count, ends.count, uuids.count) { out.insert(Service(handle: int(handles[i]), end: int(ends[i]), uuid: uuid(uuids[i]))) }
        }
        return out
    }

    /// Characteristics from the Read By Type Responses to characteristic discovery: each entry is
    /// the declaration handle, then properties, value handle and UUID.
    static func characteristics(_ file: String, direction: String, and extra: String = "frame") -> Set<Characteristic> {
        var out = Set<Characteristic>()
        // btatt.uuid16 has the attribute type (0x2803) before each entry's UUID (which tshark may
        // repeat for the value handle), then the request's type: an entry's UUID is the first of
        // each run between two 0x2803. 128-bit entry UUIDs are in btatt.uuid128 alone.
        let fields = ["btatt.handle", "btatt.characteristic_properties", "btatt.uuid16", "btatt.uuid128"]
        for r in rows(file, "btatt.opcode == 0x09 && btatt.characteristic_properties && hci_h4.direction == \(direction) && \(extra)", fields) where r.count >= 4 {
            let handles = list(r[0]), props = list(r[1]), short = list(r[2])
            let uuids = list(r[3]).isEmpty ? short.split(separator: "0x2803").compactMap(\.first) : list(r[3]).map { uuid($0, wireOrder: true) }
            for i in 0 ..< min(props.count, uuids.count, handles.count / 2) {
                out.insert(Characteristic(value: int(handles[2 * i + 1]), properties: int(props[i]), uuid: uuid(uuids[i])))
            }
        }
        return out
    }

    /// Find Information Response entries that are not characteristic value handles: descriptors.
    static func descriptors(_ file: String, direction: String, valueHandles: Set<Int>, and extra: String = "frame") -> Set<Descriptor> {
        var out = Set<Descriptor>()
        for r in rows(file, "btatt.opcode == 0x05 && hci_h4.direction == \(direction) && \(extra)", ["btatt.handle", "btatt.uuid16", "btatt.uuid128"]) where r.count >= 3 {
            let handles = list(r[0]), uuids = list(r[1]) + list(r[2]).map { uuid($0, wireOrder: true) }
            for i in 0 ..< min(handles.count, uuids.count) where !valueHandles.contains(int(handles[i])) {
                out.insert(Descriptor(handle: int(handles[i]), uuid: uuid(uuids[i])))
            }
        }
        return out
    }

    /// Writes, reads, notifications and indications in frame order (`sent`: by the capture's host).
    static func valuePDUs(_ file: String, and extra: String = "frame") -> [ValuePDU] {
        rows(file, "(btatt.opcode == 0x0a || btatt.opcode == 0x0b || btatt.opcode == 0x12 || btatt.opcode == 0x1b || btatt.opcode == 0x1d) && \(extra)",
             ["frame.number", "btatt.opcode", "btatt.handle", "btatt.value", "hci_h4.direction", "btatt.characteristic_configuration_client"]).compactMap { r in
            guard r.count >= 6 else { return nil }
            // tshark shows a CCCD value as the configuration field (0x0001), not as a value: back to its 2 bytes.
            var value = r[3]
            if value.isEmpty, !r[5].isEmpty { let v = int(r[5]); value = String(format: "%02x%02x", v & 0xFF, v >> 8) }
            return ValuePDU(frame: int(r[0]), opcode: int(r[1]), handle: int(list(r[2]).first ?? ""), value: value, sent: r[4] == "0x00")
        }
    }

    /// Number of L2CAP PDUs the capture's host sent (ATT and the rest).
    static func sentL2CAP(_ file: String) -> Int { rows(file, "btl2cap && hci_h4.direction == 0x00", ["frame.number"]).count }
}
