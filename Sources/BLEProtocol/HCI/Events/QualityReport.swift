import BLEBytes

/// Android's Bluetooth Quality Report (BQR): a Vendor Specific event (code 0xFF) whose first parameter
/// is the sub-event code 0x58, sent by controllers that implement Android's HCI requirements once the
/// host enables it with the vendor command HCI_CONTROLLER_BQR (0xFD5E). The layout is Android's, not the
/// Core specification's: AOSP packages/modules/Bluetooth `system/btif/include/btif_bqr.h`
/// (`BqrLinkQualityEvent`, 48 octets before the vendor-specific parameters; later versions append the
/// peer address, calibration failures and ISO counters, kept here as the rest).
///
/// The link-quality reports (Monitoring, Approaching LSTO, A2DP / SCO / LE Audio choppy, Connect Fail)
/// share that layout; Root Inflammation carries an error code; the trace and debug reports are vendor
/// blobs.
public enum QualityReport {
    /// The Vendor Specific event's sub-event code for BQR (`HCI_VSE_SUBCODE_BQR_SUB_EVT`).
    public static let subevent: UInt8 = 0x58

    /// Quality_Report_Id (btif_bqr.h `BqrQualityReportId`; 0x07 and 0x08 from later AOSP versions).
    public enum Kind: UInt8, Sendable {
        case monitoring = 0x01
        /// Nothing received from the peer for more than half the link supervision timeout.
        case approachingLSTO = 0x02
        case a2dpChoppy = 0x03
        case scoChoppy = 0x04
        case rootInflammation = 0x05
        case leAudioChoppy = 0x07
        case connectFail = 0x08
        case lmpTrace = 0x11
        case schedulingTrace = 0x12
        case controllerDebug = 0x13

        /// Reports laid out as `linkQuality`.
        public var isLinkQuality: Bool { [.monitoring, .approachingLSTO, .a2dpChoppy, .scoChoppy, .leAudioChoppy, .connectFail].contains(self) }
    }

    static let kinds = NameTable([
        (0x01, "Monitoring"), (0x02, "Approaching LSTO"), (0x03, "A2DP Audio Choppy"), (0x04, "(e)SCO Voice Choppy"),
        (0x05, "Root Inflammation"), (0x07, "LE Audio Choppy"), (0x08, "Connect Fail"), (0x11, "LMP/LL Message Trace"),
        (0x12, "Scheduling Trace"), (0x13, "Controller Debug Info"),
    ])
    /// btif_bqr.h `BqrPacketType`: the packet type of the connection (1 ID … 28 3-DH5).
    static let packetTypes = NameTable([
        (1, "ID"), (2, "NULL"), (3, "POLL"), (4, "FHS"), (5, "HV1"), (6, "HV2"), (7, "HV3"), (8, "DV"), (9, "EV3"),
        (10, "EV4"), (11, "EV5"), (12, "2-EV3"), (13, "2-EV5"), (14, "3-EV3"), (15, "3-EV5"), (16, "DM1"), (17, "DH1"),
        (18, "DM3"), (19, "DH3"), (20, "DM5"), (21, "DH5"), (22, "AUX1"), (23, "2-DH1"), (24, "2-DH3"), (25, "2-DH5"),
        (26, "3-DH1"), (27, "3-DH3"), (28, "3-DH5"),
    ])
    static let roles = NameTable([(0, "Central"), (1, "Peripheral")])

    /// The link-quality layout (after the sub-event code). The clock fields are Bluetooth clock ticks (0.3125 ms).
    static let linkQuality: [Param] = [
        Param("Report", .named(1, kinds), key: "Quality_Report_Id"),
        Param("Packet Type", .named(1, packetTypes), key: "Packet_Types"),
        Param("Handle", .handle, key: HCIKey.connectionHandle),
        Param("Role", .named(1, roles), key: "Connection_Role"),
        Param(.txPower, "TX Power", .signed(1, unit: "dBm"), key: "TX_Power_Level"),
        Param(.rssi, "RSSI", .signed(1, unit: "dBm"), key: HCIKey.rssi),
        Param("SNR", .uint(1), key: "SNR"),
        Param("Unused AFH Channels", .uint(1), key: "Unused_AFH_Channel_Count"),
        Param("Unideal AFH Channels", .uint(1), key: "AFH_Select_Unideal_Channel_Count"),
        // btif_bqr.h documents 0.3125 ms (one Bluetooth clock); the reports of two real Android logs read 9600
        // on links whose supervision timeout was 6 s: slots of 0.625 ms.
        Param("LSTO", .scaled(2, factor: 0.625, unit: "ms"), key: "LSTO"),
        Param("Piconet Clock", .hex(4), key: "Connection_Piconet_Clock"),
        Param("Retransmissions", .uint(4), key: "Retransmission_Count"),
        Param("No RX", .uint(4), key: "No_RX_Count"),
        Param("NAKs", .uint(4), key: "NAK_Count"),
        Param("Last TX Ack", .hex(4), key: "Last_TX_Ack_Timestamp"),
        Param("Flow Off", .uint(4), key: "Flow_Off_Count"),
        Param("Last Flow On", .hex(4), key: "Last_Flow_On_Timestamp"),
        Param("Buffer Overflow", .uint(4), key: "Buffer_Overflow_Bytes"),
        Param("Buffer Underflow", .uint(4), key: "Buffer_Underflow_Bytes"),
        Param("Vendor Parameters", .rest),
    ]
    /// Root Inflammation: the controller's error code and its vendor-specific code.
    static let rootInflammation: [Param] = [
        Param("Report", .named(1, kinds), key: "Quality_Report_Id"),
        Param("Error Code", .status, key: "Error_Code"),
        Param("Vendor Error Code", .hex(1), key: "Vendor_Specific_Error_Code"),
        Param("Vendor Parameters", .rest),
    ]
    /// LMP/LL message trace, scheduling trace, controller debug information: a handle and a vendor blob.
    static let logDump: [Param] = [
        Param("Report", .named(1, kinds), key: "Quality_Report_Id"),
        Param("Handle", .handle, key: HCIKey.connectionHandle),
        Param("Vendor Parameters", .rest),
    ]
    /// Octets of the link-quality layout before the vendor parameters (`kLinkQualityParamTotalLen`).
    public static let linkQualityLength = 48

    /// The row for a Vendor Specific event's parameters, when they are a quality report: `params`
    /// starts at the sub-event code. Nil for any other vendor event (or one too short for its layout).
    public static func row(_ params: ByteReader) -> [Param]? {
        guard params.peekU8(at: 0) == subevent, let id = params.peekU8(at: 1), let kind = Kind(rawValue: id) else { return nil }
        let body = params.remaining - 1
        if kind.isLinkQuality { return body >= linkQualityLength ? linkQuality : nil }
        return kind == .rootInflammation ? (body >= 3 ? rootInflammation : nil) : (body >= 3 ? logDump : nil)
    }

    /// A link-quality report, typed for the analysis.
    public struct LinkQuality: Sendable, Equatable {
        public var kind: Kind
        public var handle: UInt16
        public var role: UInt8
        public var txPower: Int8
        public var rssi: Int8
        public var snr: UInt8
        public var unusedAFHChannels: UInt8
        public var unidealAFHChannels: UInt8
        /// Link supervision timeout in slots of 0.625 ms (see the row).
        public var lstoTicks: UInt16
        public var retransmissions: UInt32
        public var noRX: UInt32
        public var naks: UInt32
        public var flowOff: UInt32
        public var overflowBytes: UInt32
        public var underflowBytes: UInt32

        public var lstoMillis: Double { Double(lstoTicks) * 0.625 }
    }

    /// The fields of `linkQuality`, found in the row by key.
    struct Layout: Sendable {
        let id, handle, role, tx, rssi, snr, unused, unideal, lsto, retx, noRX, nak, flowOff, overflow, underflow: RowField
        init(_ p: [Param]) {
            (id, handle, role, tx) = (RowField(p, "Quality_Report_Id"), RowField(p, "Connection_Handle"), RowField(p, "Connection_Role"),
                                      RowField(p, "TX_Power_Level"))
            (rssi, snr, unused, unideal) = (RowField(p, "RSSI"), RowField(p, "SNR"), RowField(p, "Unused_AFH_Channel_Count"),
                                            RowField(p, "AFH_Select_Unideal_Channel_Count"))
            (lsto, retx, noRX, nak) = (RowField(p, "LSTO"), RowField(p, "Retransmission_Count"), RowField(p, "No_RX_Count"), RowField(p, "NAK_Count"))
            (flowOff, overflow, underflow) = (RowField(p, "Flow_Off_Count"), RowField(p, "Buffer_Overflow_Bytes"), RowField(p, "Buffer_Underflow_Bytes"))
        }
    }
    static let layout = Layout(linkQuality)

    /// The typed link-quality report in a Vendor Specific event's parameters (`params` at the sub-event
    /// code), nil when they are not one.
    public static func linkQuality(_ params: ByteReader) -> LinkQuality? {
        guard let row = row(params), row.count == linkQuality.count else { return nil }
        var p = params
        guard (try? p.skip(1, "Sub-event")) != nil else { return nil }
        let f = layout
        do throws(DecodeError) {
            guard let kind = Kind(rawValue: try f.id.u8(p)) else { return nil }
            return LinkQuality(kind: kind, handle: try f.handle.u16(p) & 0x0FFF, role: try f.role.u8(p),
                               txPower: Int8(bitPattern: try f.tx.u8(p)), rssi: Int8(bitPattern: try f.rssi.u8(p)), snr: try f.snr.u8(p),
                               unusedAFHChannels: try f.unused.u8(p), unidealAFHChannels: try f.unideal.u8(p), lstoTicks: try f.lsto.u16(p),
                               retransmissions: try f.retx.u32(p), noRX: try f.noRX.u32(p), naks: try f.nak.u32(p),
                               flowOff: try f.flowOff.u32(p), overflowBytes: try f.overflow.u32(p), underflowBytes: try f.underflow.u32(p))
        } catch {
            return nil
        }
    }
}
