import BLEBytes

/// Vendor-specific HCI commands (OGF 0x3F, opcodes 0xFC00–0xFFFF) of the controller makers whose
/// commands are known, chosen by the manufacturer the controller reports (Read Local Version
/// Information, or a Linux monitor's Index Info). Without a known maker a vendor opcode is shown
/// as `Vendor 0xFC4E`: the same opcode means different things to different makers.
///
/// Names: Broadcom and Intel as btmon prints them (BlueZ `monitor/broadcom.c`, `monitor/intel.c`);
/// the Android vendor commands that Broadcom controllers in phones implement (Android "Bluetooth
/// HCI requirements", OCF 0x153–0x15E) as tshark names them; Qualcomm from the Linux driver
/// (`drivers/bluetooth/btqca.h`, `hci_qca.c`).
public enum HCIVendor: Sendable, Equatable {
    case broadcom, intel, qualcomm

    /// The maker for a Bluetooth SIG company identifier (Assigned Numbers 7.1): Intel 0x0002,
    /// Broadcom 0x000F, Qualcomm 0x001D.
    public init?(manufacturer: UInt16) {
        switch manufacturer {
        case 0x0002: self = .intel
        case 0x000F: self = .broadcom
        case 0x001D: self = .qualcomm
        default: return nil
        }
    }

    /// Names of opcodes (OGF 0x3F and the others through `HCIDecoder.commandName`), for the
    /// Opcode field of Command Complete / Command Status.
    public var opcodeNames: NameTable {
        switch self {
        case .broadcom: Self.broadcomNames
        case .intel: Self.intelNames
        case .qualcomm: Self.qualcommNames
        }
    }

    /// The vendor command's name, nil when this maker's table does not list it.
    public func name(_ opcode: HCIOpcode) -> StaticString? {
        guard opcode.isVendor else { return nil }
        return opcodeNames.staticName(UInt64(opcode.rawValue))
    }

    static func table(_ rows: [(UInt16, StaticString)]) -> NameTable {
        NameTable(rows.map { (UInt64(0xFC00 | $0.0), $0.1) },
                  fallback: { HCIDecoder.commandName(HCIOpcode(rawValue: UInt16(truncatingIfNeeded: $0))) })
    }

    /// BlueZ `monitor/broadcom.c` (OCF → name), then the Android commands as tshark names them for Broadcom.
    static let broadcomNames = table([
        (0x001, "Write BD ADDR"), (0x018, "Update UART Baud Rate"), (0x01C, "Write SCO PCM Int Param"),
        (0x01D, "Read SCO PCM Int Param"), (0x027, "Set Sleepmode Param"), (0x028, "Read Sleepmode Param"),
        (0x02E, "Download Minidriver"), (0x034, "Enable Radio"), (0x03B, "Enable USB HID Emulation"),
        (0x044, "Read UART Clock Setting"), (0x045, "Write UART Clock Setting"), (0x04C, "Write RAM"), (0x04D, "Read RAM"),
        (0x04E, "Launch RAM"), (0x057, "Write High Priority Connection"), (0x05A, "Read VID PID"),
        (0x06D, "Write I2SPCM Interface Param"), (0x06E, "Read Controller Features"), (0x079, "Read Verbose Config Version Info"),
        (0x153, "LE Get Vendor Capabilities"), (0x154, "LE Multi Advertising"), (0x156, "LE Batch Scan"),
        (0x157, "LE Advertising Filter"), (0x158, "LE Tracking Advertising"), (0x159, "LE Energy Info"),
        (0x15D, "A2DP Hardware Offload"),
    ])

    /// BlueZ `monitor/intel.c`.
    static let intelNames = table([
        (0x001, "Reset"), (0x002, "No Operation"), (0x005, "Read Version"), (0x006, "Set UART Baudrate"), (0x007, "Enable LPM"),
        (0x008, "PCM Write Configuration"), (0x009, "Secure Send"), (0x00D, "Read Secure Boot Params"),
        (0x00E, "Write Secure Boot Params"), (0x00F, "Unlock"), (0x010, "Change UART Baudrate"), (0x011, "Manufacturer Mode"),
        (0x012, "Read Link RSSI"), (0x022, "Get Exception Info"), (0x024, "Clear Exception Info"), (0x02F, "Write BD Data"),
        (0x030, "Read BD Data"), (0x031, "Write BD Address"), (0x032, "Flow Specification"), (0x034, "Read Secure ID"),
        (0x038, "Set Synchronous USB Interface Type"), (0x039, "Config Synchronous Interface"), (0x03F, "SW RF Kill"),
        (0x043, "Activate Deactivate Traces"), (0x04D, "Stimulate Exception"), (0x050, "Read HW Version"),
        (0x052, "Set Event Mask"), (0x053, "Config_Link_Controller"), (0x089, "DDC Write"), (0x08A, "DDC Read"),
        (0x08B, "DDC Config Write"), (0x08C, "DDC Config Read"), (0x08D, "Memory Read"), (0x08E, "Memory Write"),
        (0x0A6, "Read Supported Features"), (0x20B, "PPAG Enable"),
    ])

    /// Linux `drivers/bluetooth/btqca.h` (EDL_PATCH_CMD_OPCODE 0xFC00, EDL_NVM_ACCESS_OPCODE 0xFC0B,
    /// QCA_PRE_SHUTDOWN_CMD 0xFC08, EDL_WRITE_BD_ADDR_OPCODE 0xFC14, QCA_DISABLE_LOGGING 0xFC17) and
    /// `hci_qca.c` (baud rate 0xFC48), then the Android commands of Qualcomm phone controllers.
    static let qualcommNames = table([
        (0x000, "EDL Patch"), (0x008, "Pre Shutdown"), (0x00B, "EDL NVM Access"), (0x014, "EDL Write BD Address"),
        (0x017, "Disable Logging"), (0x048, "Set Baudrate"),
        (0x153, "LE Get Vendor Capabilities"), (0x154, "LE Multi Advertising"), (0x156, "LE Batch Scan"),
        (0x157, "LE Advertising Filter"), (0x158, "LE Tracking Advertising"), (0x159, "LE Energy Info"),
        (0x15D, "A2DP Hardware Offload"),
    ])
}

extension HCIVendor {
    /// True when an HCI packet's name depends on the maker: a vendor command, or a Command
    /// Complete / Command Status of one. A byte test, cheap enough for every frame.
    /// - Parameter h4: the packet without its H4 type byte; `isCommand`: a command (else an event).
    public static func concerns(_ p: UnsafeRawBufferPointer, isCommand: Bool) -> Bool {
        if isCommand { return p.count >= 2 && p[1] >= 0xFC }
        guard p.count >= 5 else { return false }
        if p[0] == 0x0E { return p[4] >= 0xFC }                 // Command Complete: ncmd, opcode
        if p[0] == 0x0F { return p.count >= 6 && p[5] >= 0xFC }  // Command Status: status, ncmd, opcode
        return false
    }

    /// The manufacturer in a Command Complete of Read Local Version Information (opcode 0x1001,
    /// Core v5.4 Vol 4 Part E 7.4.1) that succeeded: event 0x0E, plen, ncmd, opcode, status,
    /// HCI version, HCI revision (2), LMP version, Company_Identifier (2) at bytes 10–11.
    public static func manufacturer(inEvent p: UnsafeRawBufferPointer) -> UInt16? {
        guard p.count >= 12, p[0] == 0x0E, p[3] == 0x01, p[4] == 0x10, p[5] == 0x00 else { return nil }
        return UInt16(p[10]) | UInt16(p[11]) << 8
    }
}
