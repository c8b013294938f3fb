import BLEBytes
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
    /// LINKTYPE_USER10, as the nRF Sniffer v1 wrote its captures (the Nordic header).
    public static let pcapNordicBLEv1: UInt32 = 157
    /// LINKTYPE_PPI: decoded when it carries LE link-layer packets (Ubertooth: inner 147 or 251).
    public static let pcapPPI: UInt32 = 192
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
        case (_, pcapNordicBLEv1): "USER10 (nRF Sniffer v1)"
        case (_, pcapPPI): "PPI"
        default: "link type \(dlt)"
        }
    }

    /// Over-the-air sniffer link types: decoded by the LE link layer (BLEProtocol/LinkLayer).
    public static func isAirCapture(_ dlt: UInt32) -> Bool {
        dlt == pcapLELL || dlt == pcapLELLWithPHDR || dlt == pcapNordicBLE || dlt == pcapNordicBLEv1 || dlt == pcapPPI
    }

    /// Why a pcap link type is not decoded, what it is, and what to do (nil for the types we decode).
    public static func notDecoded(_ dlt: UInt32) -> String? {
        if dlt == pcapH4 || dlt == pcapH4WithPHDR || dlt == pcapMonitor || isAirCapture(dlt) { return nil }
        let what: String
        switch dlt {
        case 1: what = "Ethernet"
        case 101, 228, 229: what = "raw IP"
        case 105: what = "IEEE 802.11"
        case 127: what = "802.11 with radiotap"
        case 147...162: what = "a private link type (USER\(dlt - 147)): its contents depend on the tool that wrote it"
        case 195, 215, 230, 283: what = "IEEE 802.15.4"
        case 255: what = "Bluetooth BR/EDR baseband (Ubertooth)"
        default: what = "not a Bluetooth link type we know"
        }
        return "link type \(dlt) (\(what)) is not decoded. bleanalyze reads HCI captures (pcap link types 187, 201, 254; "
            + "btsnoop; PacketLogger) and LE air captures (251, 256, 272, 157 from the nRF Sniffer v1, 192 PPI from Ubertooth). "
            + "If the file holds Bluetooth under another header, save it from Wireshark as one of those "
            + "(or set the link type with `editcap -T`); nothing in it was analyzed"
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
        if let m = ByteReader(bytes).getU32be(at: 0) {
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
