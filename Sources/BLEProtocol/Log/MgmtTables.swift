import BLEBytes

/// The mgmt commands and events (BlueZ `doc/mgmt-api.txt`; names as btmon 5.66 prints them),
/// one row each with the parameters of the common ones. Rows without parameters show theirs raw.
enum MgmtTables {
    static let commands: [MessageEntry] = [
        MessageEntry(0x0001, "Read Management Version Information", returns: [Param("Version", .uint(1)), Param("Revision", .uint(2))]),
        MessageEntry(0x0002, "Read Management Supported Commands",
                     returns: [Param("Commands", .uint(2)), Param("Events", .uint(2)), Param("Opcodes", .rest)]),
        MessageEntry(0x0003, "Read Controller Index List", returns: [Param("Controllers", .counted(countBytes: 2, [Param("Index", .uint(2))]))]),
        MessageEntry(0x0004, "Read Controller Information", returns: [
            Param("Address", .custom(publicAddress)), Param("Version", .named(1, HCINames.version)), Param("Manufacturer", .company),
            Param("Supported Settings", settings), Param("Current Settings", settings), Param("Class Of Device", .classOfDevice),
            Param("Name", .text(249)), Param("Short Name", .text(11))]),
        mode(0x0005, "Set Powered", "Powered"),
        MessageEntry(0x0006, "Set Discoverable", [Param("Discoverable", .named(1, discoverable)), Param("Timeout", .uint(2))],
                     returns: currentSettings),
        mode(0x0007, "Set Connectable", "Connectable"),
        mode(0x0008, "Set Fast Connectable", "Fast Connectable"),
        mode(0x0009, "Set Bondable", "Bondable"),
        mode(0x000A, "Set Link Security", "Link Security"),
        mode(0x000B, "Set Secure Simple Pairing", "Secure Simple Pairing"),
        mode(0x000C, "Set High Speed", "High Speed"),
        mode(0x000D, "Set Low Energy", "Low Energy"),
        MessageEntry(0x000E, "Set Device Class", [Param("Major Class", .hex(1)), Param("Minor Class", .hex(1))], returns: classOfDevice),
        MessageEntry(0x000F, "Set Local Name", localName, returns: localName),
        MessageEntry(0x0010, "Add UUID", [Param("UUID", .custom(uuid128)), Param("Service Hint", .hex(1))], returns: classOfDevice),
        MessageEntry(0x0011, "Remove UUID", [Param("UUID", .custom(uuid128))], returns: classOfDevice),
        MessageEntry(0x0012, "Load Link Keys", [Param("Debug Keys", .named(1, HCINames.enable)), Param("Keys", .counted(countBytes: 2, linkKey))]),
        MessageEntry(0x0013, "Load Long Term Keys", [Param("Keys", .counted(countBytes: 2, longTermKey))]),
        device(0x0014, "Disconnect"),
        MessageEntry(0x0015, "Get Connections", returns: [Param("Connections", .counted(countBytes: 2, address))]),
        MessageEntry(0x0016, "PIN Code Reply", address + [Param("PIN Length", .uint(1)), Param("PIN Code", .secret(16))], returns: address),
        device(0x0017, "PIN Code Negative Reply"),
        MessageEntry(0x0018, "Set IO Capability", [Param("IO Capability", .named(1, ioCapability))], returns: []),
        MessageEntry(0x0019, "Pair Device", address + [Param("IO Capability", .named(1, ioCapability))], returns: address),
        device(0x001A, "Cancel Pair Device"),
        MessageEntry(0x001B, "Unpair Device", address + [Param("Disconnect", .uint(1))], returns: address),
        device(0x001C, "User Confirmation Reply"),
        device(0x001D, "User Confirmation Negative Reply"),
        MessageEntry(0x001E, "User Passkey Reply", address + [Param("Passkey", .uint(4))], returns: address),
        device(0x001F, "User Passkey Negative Reply"),
        MessageEntry(0x0020, "Read Local Out Of Band Data"),
        MessageEntry(0x0021, "Add Remote Out Of Band Data", address + [Param("OOB Data", .secret(64))], returns: address),
        device(0x0022, "Remove Remote Out Of Band Data"),
        MessageEntry(0x0023, "Start Discovery", [Param("Address Types", discoveryTypes)], returns: [Param("Address Types", discoveryTypes)]),
        MessageEntry(0x0024, "Stop Discovery", [Param("Address Types", discoveryTypes)], returns: [Param("Address Types", discoveryTypes)]),
        MessageEntry(0x0025, "Confirm Name", address + [Param("Name Known", .uint(1))], returns: address),
        device(0x0026, "Block Device"),
        device(0x0027, "Unblock Device"),
        MessageEntry(0x0028, "Set Device ID", [Param("Source", .named(2, deviceIDSource)), Param("Vendor", .hex(2)),
                                               Param("Product", .hex(2)), Param("Version", .hex(2))], returns: []),
        mode(0x0029, "Set Advertising", "Advertising"),
        mode(0x002A, "Set BR/EDR", "BR/EDR"),
        MessageEntry(0x002B, "Set Static Address", [Param("Address", .custom(randomAddress))], returns: currentSettings),
        MessageEntry(0x002C, "Set Scan Parameters", [Param("Interval", .advertisingInterval), Param("Window", .advertisingInterval)], returns: []),
        mode(0x002D, "Set Secure Connections", "Secure Connections"),
        mode(0x002E, "Set Debug Keys", "Debug Keys"),
        MessageEntry(0x002F, "Set Privacy", [Param("Privacy", .named(1, privacy)), Param("Identity Resolving Key", .secret(16))],
                     returns: currentSettings),
        MessageEntry(0x0030, "Load Identity Resolving Keys", [Param("Keys", .counted(countBytes: 2, address + [Param("Key", .secret(16))]))]),
        MessageEntry(0x0031, "Get Connection Information", address, returns: address + [
            Param(.rssi, "RSSI", .rssi), Param(.txPower, "TX Power", .txPower), Param(.txPower, "Max TX Power", .txPower)]),
        MessageEntry(0x0032, "Get Clock Information", address, returns: address + [
            Param("Local Clock", .hex(4)), Param("Piconet Clock", .hex(4)), Param("Accuracy", .uint(2))]),
        MessageEntry(0x0033, "Add Device", address + [Param("Action", .named(1, addDeviceAction))], returns: address),
        device(0x0034, "Remove Device"),
        MessageEntry(0x0035, "Load Connection Parameters", [Param("Parameters", .counted(countBytes: 2, address + connectionParameters))]),
        MessageEntry(0x0036, "Read Unconfigured Controller Index List"),
        MessageEntry(0x0037, "Read Controller Configuration Information"),
        MessageEntry(0x0038, "Set External Configuration"),
        MessageEntry(0x0039, "Set Public Address", [Param("Address", .custom(publicAddress))]),
        MessageEntry(0x003A, "Start Service Discovery"),
        MessageEntry(0x003B, "Read Local Out Of Band Extended Data"),
        MessageEntry(0x003C, "Read Extended Controller Index List"),
        MessageEntry(0x003D, "Read Advertising Features"),
        MessageEntry(0x003E, "Add Advertising"),
        MessageEntry(0x003F, "Remove Advertising", [Param("Instance", .uint(1))], returns: [Param("Instance", .uint(1))]),
        MessageEntry(0x0040, "Get Advertising Size Information"),
        MessageEntry(0x0041, "Start Limited Discovery", [Param("Address Types", discoveryTypes)], returns: [Param("Address Types", discoveryTypes)]),
        MessageEntry(0x0042, "Read Extended Controller Information"),
        MessageEntry(0x0043, "Set Appearance", [Param("Appearance", .hex(2))], returns: []),
        MessageEntry(0x0044, "Get PHY Configuration"),
        MessageEntry(0x0045, "Set PHY Configuration"),
        MessageEntry(0x0046, "Load Blocked Keys", [Param("Keys", .counted(countBytes: 2, [Param("Key Type", .uint(1)), Param("Value", .secret(16))]))]),
        mode(0x0047, "Set Wideband Speech", "Wideband Speech"),
        MessageEntry(0x0048, "Read Controller Capabilities"),
        MessageEntry(0x0049, "Read Experimental Features Information",
                     returns: [Param("Features", .counted(countBytes: 2, [Param("UUID", .custom(uuid128)), Param("Flags", .hex(4))]))]),
        MessageEntry(0x004A, "Set Experimental Feature"),
        MessageEntry(0x004B, "Read Default System Configuration"),
        MessageEntry(0x004C, "Set Default System Configuration"),
        MessageEntry(0x004D, "Read Default Runtime Configuration"),
        MessageEntry(0x004E, "Set Default Runtime Configuration"),
        MessageEntry(0x004F, "Get Device Flags", address, returns: address + [Param("Supported Flags", .hex(4)), Param("Current Flags", .hex(4))]),
        MessageEntry(0x0050, "Set Device Flags", address + [Param("Current Flags", .hex(4))], returns: address),
        MessageEntry(0x0051, "Read Advertisement Monitor Features"),
        MessageEntry(0x0052, "Add Advertisement Patterns Monitor"),
        MessageEntry(0x0053, "Remove Advertisement Monitor", [Param("Handle", .uint(2))], returns: [Param("Handle", .uint(2))]),
        MessageEntry(0x0054, "Add Extended Advertising Parameters"),
        MessageEntry(0x0055, "Add Extended Advertising Data"),
        MessageEntry(0x0056, "Add Advertisement Patterns Monitor With RSSI Threshold"),
        MessageEntry(0x0057, "Set Mesh Receiver"),
        MessageEntry(0x0058, "Read Mesh Features"),
        MessageEntry(0x0059, "Mesh Send"),
        MessageEntry(0x005A, "Mesh Send Cancel"),
    ]

    static let events: [MessageEntry] = [
        MessageEntry(0x0001, "Command Complete"),   // decoded by `Mgmt.commandComplete`
        MessageEntry(0x0002, "Command Status", [Param("Command", .named(2, Mgmt.commandNames)), Param("Status", .named(1, Mgmt.statusNames))]),
        MessageEntry(0x0003, "Controller Error", [Param(.errorCode, "Error Code", .hex(1))]),
        MessageEntry(0x0004, "Index Added"),
        MessageEntry(0x0005, "Index Removed"),
        MessageEntry(0x0006, "New Settings", currentSettings),
        MessageEntry(0x0007, "Class Of Device Changed", classOfDevice),
        MessageEntry(0x0008, "Local Name Changed", localName),
        MessageEntry(0x0009, "New Link Key", [Param("Store Hint", .uint(1))] + linkKey),
        MessageEntry(0x000A, "New Long Term Key", [Param("Store Hint", .uint(1))] + longTermKey),
        MessageEntry(0x000B, "Device Connected", address + [Param("Flags", .hex(4)), Param("EIR Data", eir)]),
        MessageEntry(0x000C, "Device Disconnected", address + [Param(.reason, "Reason", .named(1, disconnectReason))]),
        MessageEntry(0x000D, "Connect Failed", address + [Param("Status", .named(1, Mgmt.statusNames))]),
        MessageEntry(0x000E, "PIN Code Request", address + [Param("Secure PIN", .uint(1))]),
        MessageEntry(0x000F, "User Confirmation Request", address + [Param("Confirm Hint", .uint(1)), Param("Value", .uint(4))]),
        MessageEntry(0x0010, "User Passkey Request", address),
        MessageEntry(0x0011, "Authentication Failed", address + [Param("Status", .named(1, Mgmt.statusNames))]),
        MessageEntry(0x0012, "Device Found", address + [Param(.rssi, "RSSI", .rssi), Param("Flags", .hex(4)), Param("EIR Data", eir)]),
        MessageEntry(0x0013, "Discovering", [Param("Address Types", discoveryTypes), Param("Discovery", .named(1, HCINames.enable))]),
        MessageEntry(0x0014, "Device Blocked", address),
        MessageEntry(0x0015, "Device Unblocked", address),
        MessageEntry(0x0016, "Device Unpaired", address),
        MessageEntry(0x0017, "Passkey Notify", address + [Param("Passkey", .uint(4)), Param("Entered", .uint(1))]),
        MessageEntry(0x0018, "New Identity Resolving Key", [Param("Store Hint", .uint(1)), Param(.randomAddress, "Random Address", .custom(randomAddress))]
                     + address + [Param("Key", .secret(16))]),
        MessageEntry(0x0019, "New Signature Resolving Key", [Param("Store Hint", .uint(1))] + address
                     + [Param("Key Type", .uint(1)), Param("Key", .secret(16))]),
        MessageEntry(0x001A, "Device Added", address + [Param("Action", .named(1, addDeviceAction))]),
        MessageEntry(0x001B, "Device Removed", address),
        MessageEntry(0x001C, "New Connection Parameter", [Param("Store Hint", .uint(1))] + address + connectionParameters),
        MessageEntry(0x001D, "Unconfigured Index Added"),
        MessageEntry(0x001E, "Unconfigured Index Removed"),
        MessageEntry(0x001F, "New Configuration Options", [Param("Missing Options", .hex(4))]),
        MessageEntry(0x0020, "Extended Index Added", [Param("Type", .uint(1)), Param("Bus", .named(1, LogRecords.busNames))]),
        MessageEntry(0x0021, "Extended Index Removed", [Param("Type", .uint(1)), Param("Bus", .named(1, LogRecords.busNames))]),
        MessageEntry(0x0022, "Local Out Of Band Extended Data Updated"),
        MessageEntry(0x0023, "Advertising Added", [Param("Instance", .uint(1))]),
        MessageEntry(0x0024, "Advertising Removed", [Param("Instance", .uint(1))]),
        MessageEntry(0x0025, "Extended Controller Information Changed"),
        MessageEntry(0x0026, "PHY Configuration Changed"),
        MessageEntry(0x0027, "Experimental Feature Changed", [Param("UUID", .custom(uuid128)), Param("Flags", .hex(4))]),
        MessageEntry(0x0028, "Default System Configuration Changed"),
        MessageEntry(0x0029, "Default Runtime Configuration Changed"),
        MessageEntry(0x002A, "Device Flags Changed", address + [Param("Supported Flags", .hex(4)), Param("Current Flags", .hex(4))]),
        MessageEntry(0x002B, "Advertisement Monitor Added", [Param("Handle", .uint(2))]),
        MessageEntry(0x002C, "Advertisement Monitor Removed", [Param("Handle", .uint(2))]),
        MessageEntry(0x002D, "Controller Suspended", [Param("Suspend State", .uint(1))]),
        MessageEntry(0x002E, "Controller Resumed", [Param("Wake Reason", .uint(1))] + address),
        MessageEntry(0x002F, "ADV Monitor Device Found"),
        MessageEntry(0x0030, "ADV Monitor Device Lost"),
        MessageEntry(0x0031, "Mesh Device Found"),
        MessageEntry(0x0032, "Mesh Packet Complete"),
    ]

    // MARK: Shared parameter layouts

    /// `struct mgmt_addr_info`: BD_ADDR, then its type (0 BR/EDR, 1 LE Public, 2 LE Random).
    static let address = [Param("Address", .custom(addressWithType)), Param(.addressType, "Address Type", .named(1, addressType))]
    static let settings = FieldSpec.flags(4, settingBits)
    static let currentSettings = [Param("Current Settings", settings)]
    static let classOfDevice = [Param("Class Of Device", .classOfDevice)]
    static let localName = [Param("Name", .text(249)), Param("Short Name", .text(11))]
    /// `struct mgmt_link_key_info`.
    static let linkKey = address + [Param("Key Type", .named(1, linkKeyType)), Param("Value", .secret(16)), Param("PIN Length", .uint(1))]
    /// `struct mgmt_ltk_info`.
    static let longTermKey = address + [
        Param("Key Type", .named(1, longTermKeyType)), Param("Central", .uint(1)), Param("Encryption Size", .uint(1)),
        Param("Diversifier", .hex(2)), Param(.randomNumber, "Random Number", .secret(8)), Param("Value", .secret(16))]
    static let connectionParameters = [
        Param("Min Connection Interval", .connectionInterval), Param("Max Connection Interval", .connectionInterval),
        Param("Connection Latency", .latency), Param("Supervision Timeout", .supervisionTimeout)]
    static let discoveryTypes = FieldSpec.flags(1, NameTable([(0x01, "BR/EDR"), (0x02, "LE Public"), (0x04, "LE Random")]))
    /// u16 length, then extended inquiry response / advertising data.
    static let eir = FieldSpec.custom(eirData)

    static func mode(_ code: UInt16, _ name: StaticString, _ parameter: StaticString) -> MessageEntry {
        MessageEntry(code, name, [Param(parameter, .named(1, HCINames.enable))], returns: currentSettings)
    }

    static func device(_ code: UInt16, _ name: StaticString) -> MessageEntry {
        MessageEntry(code, name, address, returns: address)
    }

    // MARK: Readers

    /// The address of an `mgmt_addr_info`, typed from the byte after it (read by the next field).
    @Sendable static func addressWithType(_ r: inout ByteReader) throws(DecodeError) -> FieldValue {
        let a = try r.address("Address")
        let random = r.peekU8() == 2
        return .address(a, type: random ? .randomDevice : .publicDevice)
    }

    @Sendable static func publicAddress(_ r: inout ByteReader) throws(DecodeError) -> FieldValue {
        .address(try r.address("Address"), type: .publicDevice)
    }

    @Sendable static func randomAddress(_ r: inout ByteReader) throws(DecodeError) -> FieldValue {
        .address(try r.address("Address"), type: .randomDevice)
    }

    /// u16 length, then that many bytes of AD structures (EIR or advertising data and scan response).
    @Sendable static func eirData(_ r: inout ByteReader) throws(DecodeError) -> FieldValue {
        let length = try r.u16le("EIR Length")
        var data = try r.slice(Int(length), "EIR Data")
        return ADFieldSpec.structures(&data)
    }

    /// A 128-bit UUID, little-endian, shown by name where it has one.
    @Sendable static func uuid128(_ r: inout ByteReader) throws(DecodeError) -> FieldValue {
        .text(try r.uuid(width: 16).displayName)
    }

    // MARK: Names

    static let addressType = NameTable([(0, "BR/EDR"), (1, "LE Public"), (2, "LE Random")])
    /// Current_Settings / Supported_Settings bits (`doc/mgmt-api.txt`, Read Controller Information).
    static let settingBits = NameTable([
        (1 << 0, "Powered"), (1 << 1, "Connectable"), (1 << 2, "Fast Connectable"), (1 << 3, "Discoverable"),
        (1 << 4, "Bondable"), (1 << 5, "Link Security"), (1 << 6, "Secure Simple Pairing"), (1 << 7, "BR/EDR"),
        (1 << 8, "High Speed"), (1 << 9, "Low Energy"), (1 << 10, "Advertising"), (1 << 11, "Secure Connections"),
        (1 << 12, "Debug Keys"), (1 << 13, "Privacy"), (1 << 14, "Controller Configuration"), (1 << 15, "Static Address"),
        (1 << 16, "PHY Configuration"), (1 << 17, "Wideband Speech"), (1 << 18, "CIS Central"), (1 << 19, "CIS Peripheral"),
        (1 << 20, "ISO Broadcaster"), (1 << 21, "Sync Receiver"),
    ])
    static let discoverable = NameTable([(0, "Disabled"), (1, "General"), (2, "Limited")])
    static let privacy = NameTable([(0, "Disabled"), (1, "Enabled"), (2, "Limited")])
    /// The same values as SMP's (Core v5.4 Vol 3 Part H 3.5.1).
    static let ioCapability = SMP.IOCapability.names
    static let addDeviceAction = NameTable([(0, "Background scan"), (1, "Allow incoming connection"), (2, "Auto-connect")])
    static let deviceIDSource = NameTable([(0, "Disabled"), (1, "Bluetooth SIG assigned"), (2, "USB Implementer's Forum assigned")])
    /// Device Disconnected reasons.
    static let disconnectReason = NameTable([
        (0, "Unspecified"), (1, "Connection timeout"), (2, "Connection terminated by local host"),
        (3, "Connection terminated by remote host"), (4, "Connection terminated due to authentication failure"),
        (5, "Connection terminated by local host for suspend"),
    ])
    /// Link key types (Core v5.4 Vol 4 Part E 7.7.24).
    static let linkKeyType = NameTable([
        (0, "Combination key"), (1, "Local Unit key"), (2, "Remote Unit key"), (3, "Debug Combination key"),
        (4, "Unauthenticated Combination key from P-192"), (5, "Authenticated Combination key from P-192"),
        (6, "Changed Combination key"), (7, "Unauthenticated Combination key from P-256"),
        (8, "Authenticated Combination key from P-256"),
    ])
    static let longTermKeyType = NameTable([
        (0, "Unauthenticated legacy key"), (1, "Authenticated legacy key"), (2, "Unauthenticated key from P-256"),
        (3, "Authenticated key from P-256"), (4, "Debug key from P-256"),
    ])
}
