/// The packets that make up advertising, by code: what `packets --adv` shows (the reports a
/// scanner gets and the host's commands that set up, start, stop or size advertising). Kept as
/// codes, so renaming a command's display name changes nothing.
public enum AdvertisingTraffic {
    /// LE Controller commands of advertising (Core v5.4 Vol 4 Part E 7.8.5–7.8.9 legacy, 7.8.52–7.8.61
    /// extended, 7.8.61–7.8.63 and 7.8.125–7.8.127 periodic, 7.8.67–7.8.69 and 7.8.88–7.8.92 periodic
    /// sync and 7.8.70–7.8.73 the periodic advertiser list, 7.8.53 v2 parameters) and Android's
    /// vendor advertising commands (Bluetooth HCI Requirements for Android, OGF 0x3F: LE_Multi_Advt
    /// OCF 0x154, LE_APCF OCF 0x157 — the advertising packet content filters that decide which
    /// reports the host gets —, LE_Track_Adv OCF 0x158). Vendor opcodes belong to their maker; these
    /// three are the ones Android's controllers (Broadcom, Qualcomm) implement. Scan parameters and
    /// scan enable are scanning, not advertising.
    public static let hciCommands: Set<UInt16> = [
        0x2006, 0x2007, 0x2008, 0x2009, 0x200A,
        0x2035, 0x2036, 0x2037, 0x2038, 0x2039, 0x203A, 0x203B, 0x203C, 0x203D,
        0x203E, 0x203F, 0x2040, 0x2044, 0x2045, 0x2046, 0x2047, 0x2048, 0x2049, 0x204A,
        0x2059, 0x205A, 0x205B, 0x205C, 0x205D,
        0x207F, 0x2082, 0x2083, 0x2086,
        0xFD54, 0xFD57, 0xFD58,
    ]

    /// LE Meta subevents of advertising (Core v5.4 Vol 4 Part E 7.7.65): the reports of legacy,
    /// directed and extended advertising (0x02, 0x0B, 0x0D), periodic advertising sync established,
    /// report and lost (0x0E, 0x0F, 0x10; v2 0x24, 0x25), sync transfer received (0x18, v2 0x26),
    /// BIGInfo report (0x22), PAwR subevent data request and response report (0x27, 0x28), and the
    /// advertiser's Advertising Set Terminated (0x12) and Scan Request Received (0x13).
    public static let leMetaSubevents: Set<UInt8> = [
        0x02, 0x0B, 0x0D, 0x0E, 0x0F, 0x10, 0x12, 0x13, 0x18, 0x22, 0x24, 0x25, 0x26, 0x27, 0x28,
    ]

    /// BlueZ management commands of advertising (doc/mgmt-api.txt): Set Advertising (0x0029), Read
    /// Advertising Features (0x003D), Add/Remove Advertising (0x003E/0x003F), Get Advertising Size
    /// Information (0x0040), Add Extended Advertising Parameters/Data (0x0054/0x0055).
    public static let mgmtCommands: Set<UInt16> = [0x0029, 0x003D, 0x003E, 0x003F, 0x0040, 0x0054, 0x0055]
    /// BlueZ management events: Advertising Added (0x0023) and Removed (0x0024).
    public static let mgmtEvents: Set<UInt16> = [0x0023, 0x0024]
}
