import BLECapture

/// What a PacketLogger log says of the device that recorded it. iOS and macOS open a log with
/// note records (type 0xFC) of the form `Key: Value` — `Product: iPhone17,1`,
/// `Software: Version 26.5 (Build 23F77)`, `Chipset: BCM_4399, Revision: s=C2`,
/// `Firmware Version: 23.5.218.1220`, `Bluetooth Host: MobileBluetooth-195.7.1.2`,
/// `Transport: PCIe`. Other notes (BTstack's debug lines, IOBluetooth messages) are ignored.
/// Bounded: one value per key, each cut to `maxValueLength` characters.
public struct HostNotes: Sendable, Equatable {
    /// The keys we keep, as the notes spell them (the order of `set(_:_:)`).
    static let keys = ["Product: ", "Software: ", "Chipset: ", "Firmware Version: ", "Bluetooth Host: ", "Transport: "]
    /// First bytes of the keys: other notes (BTstack writes one per log line) are passed over without
    /// making a String of them.
    static let initials = Set(keys.compactMap { $0.utf8.first })
    static let maxValueLength = 200
    /// Notes longer than this are log lines, not the header's facts.
    static let maxNoteLength = 512

    /// The phone or Mac model identifier (`iPhone17,1`).
    public var product: String?
    /// The operating system (`Version 26.5 (Build 23F77)`).
    public var software: String?
    public var chipset: String?
    /// The controller firmware version.
    public var controllerFirmware: String?
    /// The Bluetooth host stack (`MobileBluetooth-195.7.1.2`).
    public var bluetoothHost: String?
    public var transport: String?

    public init() {}

    public var isEmpty: Bool { self == HostNotes() }

    /// Reads one note record's text.
    mutating func consume(_ payload: UnsafeRawBufferPointer) {
        guard payload.count > 3, payload.count <= Self.maxNoteLength, let first = payload.first, Self.initials.contains(first) else { return }
        // The text ends at the first NUL (iOS pads some notes with zeros).
        let end = payload.firstIndex(of: 0) ?? payload.count
        let text = String(decoding: UnsafeRawBufferPointer(rebasing: payload[..<end]), as: UTF8.self)
        for (i, prefix) in Self.keys.enumerated() where text.hasPrefix(prefix) {
            let value = Self.trimmed(text.dropFirst(prefix.count))
            if !value.isEmpty { set(i, String(value.prefix(Self.maxValueLength))) }
            return
        }
    }

    /// Fills the field of `keys[index]` unless an earlier note did.
    private mutating func set(_ index: Int, _ value: String) {
        switch index {
        case 0: product = product ?? value
        case 1: software = software ?? value
        case 2: chipset = chipset ?? value
        case 3: controllerFirmware = controllerFirmware ?? value
        case 4: bluetoothHost = bluetoothHost ?? value
        default: transport = transport ?? value
        }
    }

    /// The text without surrounding spaces and line ends.
    private static func trimmed(_ text: Substring) -> String {
        var s = text
        while let c = s.first, c == " " || c == "\t" || c.isNewline { s = s.dropFirst() }
        while let c = s.last, c == " " || c == "\t" || c.isNewline { s = s.dropLast() }
        return String(s)
    }
}
