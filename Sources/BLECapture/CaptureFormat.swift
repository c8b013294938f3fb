/// The container formats we read, detected from the bytes (never from the file name).
public enum CaptureFormat: String, Sendable {
    case btsnoop, pcap, pcapng, packetlogger
}

/// Link types (pcap DLT numbers and btsnoop datalinks) we know by name.
/// pcap: https://www.tcpdump.org/linktypes.html; btsnoop: RFC 1761 plus the BlueZ/Android extensions.
public enum Datalink {
    public static let btsnoopH1: UInt32 = 1001
    public static let btsnoopH4: UInt32 = 1002
    public static let btsnoopBCSP: UInt32 = 1003
    public static let btsnoopThreeWire: UInt32 = 1004
    public static let btsnoopMonitor: UInt32 = 2001
    public static let pcapH4: UInt32 = 187
    public static let pcapH4WithPHDR: UInt32 = 201
    public static let pcapLELL: UInt32 = 251
    public static let pcapMonitor: UInt32 = 254
    public static let pcapLELLWithPHDR: UInt32 = 256
    public static let pcapNordicBLE: UInt32 = 272
    /// PacketLogger files have no datalink; we report this pseudo value.
    public static let packetLogger: UInt32 = 0

    public static func name(_ dlt: UInt32, format: CaptureFormat) -> String {
        switch (format, dlt) {
        case (.btsnoop, btsnoopH1): "H1 (HCI UART without indicator)"
        case (.btsnoop, btsnoopH4): "H4 (HCI UART)"
        case (.btsnoop, btsnoopBCSP): "BCSP"
        case (.btsnoop, btsnoopThreeWire): "H5 (three-wire UART)"
        case (.btsnoop, btsnoopMonitor): "Linux monitor"
        case (.packetlogger, _): "PacketLogger"
        case (_, pcapH4): "BLUETOOTH_HCI_H4"
        case (_, pcapH4WithPHDR): "BLUETOOTH_HCI_H4_WITH_PHDR"
        case (_, pcapLELL): "BLUETOOTH_LE_LL"
        case (_, pcapMonitor): "BLUETOOTH_LINUX_MONITOR"
        case (_, pcapLELLWithPHDR): "BLUETOOTH_LE_LL_WITH_PHDR"
        case (_, pcapNordicBLE): "NORDIC_BLE"
        default: "link type \(dlt)"
        }
    }

    /// Over-the-air sniffer link types: decoded by the LE link layer (BLEProtocol/LinkLayer).
    public static func isAirCapture(_ dlt: UInt32) -> Bool {
        dlt == pcapLELL || dlt == pcapLELLWithPHDR || dlt == pcapNordicBLE
    }
}

/// What the file turned out to be.
public struct CaptureInfo: Sendable {
    public var format: CaptureFormat
    public var datalink: UInt32
    public var datalinkName: String
    /// The input was gzip-compressed (read transparently).
    public var compressed: Bool
    /// PacketLogger: the record lengths are big-endian (older macOS) rather than little-endian.
    public var bigEndian: Bool
    /// Set when the frames are counted but not decoded (air captures, unsupported datalinks).
    public var notDecodedReason: String?
    public var fileSize: Int
    /// Set when the input was a field log (bugreport zip, sysdiagnose tar.gz, btsnooz text): which
    /// log inside was analyzed and which others are there.
    public var fieldLog: FieldLogOrigin?

    public init(format: CaptureFormat, datalink: UInt32, compressed: Bool = false, bigEndian: Bool = false,
                notDecodedReason: String? = nil, fileSize: Int) {
        self.format = format
        self.datalink = datalink
        self.datalinkName = Datalink.name(datalink, format: format)
        self.compressed = compressed
        self.bigEndian = bigEndian
        self.notDecodedReason = notDecodedReason
        self.fileSize = fileSize
    }
}

/// Format detection from the first bytes of a file.
enum FormatSniffer {
    enum Guess: Equatable { case gzip, btsnoop, pcap, pcapng, packetlogger(bigEndian: Bool), unknown }

    static func guess(_ bytes: UnsafeRawBufferPointer) -> Guess {
        if bytes.count >= 2, bytes[0] == 0x1f, bytes[1] == 0x8b { return .gzip }
        if bytes.count >= 8, Array(bytes[0..<8]) == Array("btsnoop\0".utf8) { return .btsnoop }
        if bytes.count >= 4 {
            let m = UInt32(bytes[0]) << 24 | UInt32(bytes[1]) << 16 | UInt32(bytes[2]) << 8 | UInt32(bytes[3])
            switch m {
            case 0xa1b2c3d4, 0xd4c3b2a1, 0xa1b23c4d, 0x4d3cb2a1: return .pcap
            case 0x0a0d0d0a: return .pcapng
            default: break
            }
        }
        if let be = PacketLoggerReader.plausibleEndianness(bytes) { return .packetlogger(bigEndian: be) }
        return .unknown
    }
}
