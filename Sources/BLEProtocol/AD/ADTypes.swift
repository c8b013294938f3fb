import BLEBytes

/// The AD type rows, Core Supplement v11 Part A 1 (one row per data type, in type order).
extension ADDecoding {
    static let rows: [ADTypeEntry] = [
        ADTypeEntry(.flags, "Flags") { r, f throws(DecodeError) in
            // Zero or more octets; octets after the first are reserved for future flags (Part A 1.3).
            guard !r.isAtEnd else { return }
            f.append(Field("Flags", .integer(UInt64(try r.u8("Flags")), .flags(bytes: 1, flagNames))))
            if r.remaining > 0 { f.append(Field("More Flags", .bytes(Array(r.rest().bytes)))) }
        },
        ADTypeEntry(.incompleteUUID16, "Incomplete List of 16-bit Service UUIDs", uuidList(2)),
        ADTypeEntry(.completeUUID16, "Complete List of 16-bit Service UUIDs", uuidList(2)),
        ADTypeEntry(.incompleteUUID32, "Incomplete List of 32-bit Service UUIDs", uuidList(4)),
        ADTypeEntry(.completeUUID32, "Complete List of 32-bit Service UUIDs", uuidList(4)),
        ADTypeEntry(.incompleteUUID128, "Incomplete List of 128-bit Service UUIDs", uuidList(16)),
        ADTypeEntry(.completeUUID128, "Complete List of 128-bit Service UUIDs", uuidList(16)),
        ADTypeEntry(.shortenedLocalName, "Shortened Local Name", params: [Param(.deviceName, "Name", .custom(GATTValues.utf8Rest))]),
        ADTypeEntry(.completeLocalName, "Complete Local Name", params: [Param(.deviceName, "Name", .custom(GATTValues.utf8Rest))]),
        ADTypeEntry(.txPowerLevel, "Tx Power Level", params: [Param(.txPower, "TX Power", .signed(1, unit: "dBm"))]),
        ADTypeEntry(.classOfDevice, "Class of Device") { r, f throws(DecodeError) in
            let v = UInt64(try r.u24le("Class of Device"))
            f.append(Field("Class", .integer(v, .hex(bytes: 3))))
            f.append(Field("Major Service Classes", .integer(v & 0xFF_E000, .flags(bytes: 3, majorServiceClassNames))))
            f.append(Field("Major Device Class", .integer(v >> 8 & 0x1F, .named(bytes: 1, majorDeviceClassNames))))
            f.append(Field("Minor Device Class", .integer(v >> 2 & 0x3F, .hex(bytes: 1))))
        },
        ADTypeEntry(.simplePairingHashC192, "Simple Pairing Hash C-192", params: [Param("Hash C", .secret(16))]),
        ADTypeEntry(.simplePairingRandomizerR192, "Simple Pairing Randomizer R-192", params: [Param("Randomizer R", .secret(16))]),
        ADTypeEntry(.deviceIDOrTKValue, "Device ID / Security Manager TK Value") { r, f throws(DecodeError) in
            switch r.remaining {
            case 16: f.append(Field("TK Value", .secret(try r.copy(16, "TK Value"))))
            case 8:
                // Device ID in EIR (Device ID Profile 5): source, vendor, product, version.
                let source = try r.u16le("Vendor ID Source")
                f.append(Field("Vendor ID Source", .integer(UInt64(source), .named(bytes: 2, GATTNames.vendorIDSource))))
                f.append(Field("Vendor ID", .integer(UInt64(try r.u16le("Vendor ID")), source == 1 ? .named(bytes: 2, GATTNames.company) : .hex(bytes: 2))))
                f.append(Field("Product ID", .integer(UInt64(try r.u16le("Product ID")), .hex(bytes: 2))))
                f.append(Field("Version", .integer(UInt64(try r.u16le("Version")), .hex(bytes: 2))))
            default:
                throw DecodeError(kind: .lengthMismatch(declared: 16, actual: r.remaining), offset: r.absoluteOffset, field: "TK Value")
            }
        },
        ADTypeEntry(.securityManagerOOBFlags, "Security Manager Out of Band Flags", params: [Param("Flags", .flags(1, oobFlagNames))]),
        ADTypeEntry(.peripheralConnectionIntervalRange, "Peripheral Connection Interval Range", params: [
            Param("Min Interval", .scaled(2, factor: 1.25, unit: "msec")), Param("Max Interval", .scaled(2, factor: 1.25, unit: "msec")),
        ]),
        ADTypeEntry(.solicitationUUID16, "List of 16-bit Service Solicitation UUIDs", uuidList(2)),
        ADTypeEntry(.solicitationUUID128, "List of 128-bit Service Solicitation UUIDs", uuidList(16)),
        ADTypeEntry(.serviceData16, "Service Data - 16-bit UUID", serviceData(2)),
        ADTypeEntry(.publicTargetAddress, "Public Target Address", addressList),
        ADTypeEntry(.randomTargetAddress, "Random Target Address", addressList),
        ADTypeEntry(.appearance, "Appearance", params: [Param("Appearance", .named(2, GATTNames.appearance))]),
        ADTypeEntry(.advertisingInterval, "Advertising Interval", params: [Param("Interval", .scaled(2, factor: 0.625, unit: "msec"))]),
        ADTypeEntry(.leBluetoothDeviceAddress, "LE Bluetooth Device Address") { r, f throws(DecodeError) in
            let address = try r.address("Device Address")
            let flags = try r.u8("Address Type")
            f.append(Field("Address", .address(address, type: LEAddressType(rawValue: flags & 0x01))))
        },
        ADTypeEntry(.leRole, "LE Role", params: [Param("Role", .named(1, leRoleNames))]),
        ADTypeEntry(.simplePairingHashC256, "Simple Pairing Hash C-256", params: [Param("Hash C", .secret(16))]),
        ADTypeEntry(.simplePairingRandomizerR256, "Simple Pairing Randomizer R-256", params: [Param("Randomizer R", .secret(16))]),
        ADTypeEntry(.solicitationUUID32, "List of 32-bit Service Solicitation UUIDs", uuidList(4)),
        ADTypeEntry(.serviceData32, "Service Data - 32-bit UUID", serviceData(4)),
        ADTypeEntry(.serviceData128, "Service Data - 128-bit UUID", serviceData(16)),
        ADTypeEntry(.leSCConfirmationValue, "LE Secure Connections Confirmation Value", params: [Param("Confirmation Value", .secret(16))]),
        ADTypeEntry(.leSCRandomValue, "LE Secure Connections Random Value", params: [Param("Random Value", .secret(16))]),
        ADTypeEntry(.uri, "URI") { r, f throws(DecodeError) in f.append(Field("URI", .text(try AD.decodeURI(&r)))) },
        ADTypeEntry(.indoorPositioning, "Indoor Positioning", params: [Param("Data", .rest)]),
        ADTypeEntry(.transportDiscoveryData, "Transport Discovery Data", params: [Param("Data", .rest)]),
        ADTypeEntry(.leSupportedFeatures, "LE Supported Features", params: [Param("Features", .rest)]),
        ADTypeEntry(.channelMapUpdateIndication, "Channel Map Update Indication", params: [Param("Data", .rest)]),
        ADTypeEntry(.pbADV, "PB-ADV", params: [Param("Data", .rest)]),
        ADTypeEntry(.meshMessage, "Mesh Message", params: [Param("Data", .rest)]),
        ADTypeEntry(.meshBeacon, "Mesh Beacon", params: [Param("Data", .rest)]),
        ADTypeEntry(.bigInfo, "BIGInfo", params: [Param("Data", .rest)]),
        ADTypeEntry(.broadcastCode, "Broadcast_Code", params: [Param("Broadcast Code", .custom(secretRest))]),
        ADTypeEntry(.resolvableSetIdentifier, "Resolvable Set Identifier", params: [Param("RSI", .rest)]),
        ADTypeEntry(.advertisingIntervalLong, "Advertising Interval - long") { r, f throws(DecodeError) in
            let n = r.remaining
            guard n == 3 || n == 4 else {
                throw DecodeError(kind: .lengthMismatch(declared: 4, actual: n), offset: r.absoluteOffset, field: "Advertising Interval")
            }
            let v = n == 3 ? UInt64(try r.u24le("Advertising Interval")) : UInt64(try r.u32le("Advertising Interval"))
            f.append(Field("Interval", .integer(v, .scaled(bytes: n, factor: 0.625, unit: "msec"))))
        },
        ADTypeEntry(.broadcastName, "Broadcast_Name", params: [Param(.deviceName, "Name", .custom(GATTValues.utf8Rest))]),
        ADTypeEntry(.encryptedAdvertisingData, "Encrypted Advertising Data", params: [Param("Data", .rest)]),
        ADTypeEntry(.periodicAdvertisingResponseTimingInformation, "Periodic Advertising Response Timing Information", params: [Param("Data", .rest)]),
        ADTypeEntry(.electronicShelfLabel, "Electronic Shelf Label", params: [Param("Data", .rest)]),
        ADTypeEntry(.threeDInformationData, "3D Information Data", params: [Param("Data", .rest)]),
        ADTypeEntry(.manufacturerSpecificData, "Manufacturer Specific Data") { r, f throws(DecodeError) in
            let company = try r.u16le("Company Identifier")
            f.append(Field("Company", .integer(UInt64(company), .named(bytes: 2, GATTNames.company))))
            if let beacon = try AD.IBeacon.parse(company: company, r) {
                _ = r.rest()
                f.append(Field("iBeacon", .group([
                    Field("UUID", .text(beacon.uuid.description)),
                    Field("Major", .integer(UInt64(beacon.major), .decimal(bytes: 2))),
                    Field("Minor", .integer(UInt64(beacon.minor), .decimal(bytes: 2))),
                    Field("Measured Power", .integer(UInt64(UInt8(bitPattern: beacon.measuredPower)), .signed(bytes: 1, unit: "dBm"))),
                ])))
            } else {
                f.append(Field("Data", .bytes(Array(r.rest().bytes))))
            }
        },
    ]

    /// A list of UUIDs of `width` bytes with their SIG names, one `UUID` field each.
    /// - Throws: `.lengthMismatch` when the data is not a whole number of UUIDs (shown as a note).
    static func uuidList(_ width: Int) -> ADTypeEntry.Decode {
        { r, f throws(DecodeError) in
            guard r.remaining % width == 0 else {   // safe: width is the constant 2, 4 or 16
                throw DecodeError(kind: .lengthMismatch(declared: width, actual: r.remaining), offset: r.absoluteOffset, field: "UUID list")
            }
            while !r.isAtEnd { f.append(Field("UUID", .text(try r.uuid(width: width).displayName))) }
        }
    }

    /// Service Data: a UUID of `width` bytes, then data (an Eddystone frame for 0xFEAA).
    static func serviceData(_ width: Int) -> ADTypeEntry.Decode {
        { r, f throws(DecodeError) in
            let uuid = try r.uuid(width: width, "Service UUID")
            f.append(Field("UUID", .text(uuid.displayName)))
            if uuid.uuid16 == AD.Eddystone.serviceUUID, width == 2, !r.isAtEnd {
                f.append(Field("Eddystone", .group(eddystoneFields(try AD.Eddystone.parse(&r)))))
            } else {
                f.append(Field("Data", .bytes(Array(r.rest().bytes))))
            }
        }
    }

    /// Public / Random Target Address: one or more 6-byte addresses.
    static let addressList: ADTypeEntry.Decode = { r, f throws(DecodeError) in
        guard r.remaining % 6 == 0 else {   // safe: constant divisor
            throw DecodeError(kind: .lengthMismatch(declared: 6, actual: r.remaining), offset: r.absoluteOffset, field: "Target Address")
        }
        while !r.isAtEnd { f.append(Field("Address", .address(try r.address("Target Address"), type: nil))) }
    }

    @Sendable static func secretRest(_ r: inout ByteReader) throws(DecodeError) -> FieldValue {
        .secret(Array(r.rest().bytes))
    }

    static func eddystoneFields(_ frame: AD.Eddystone) -> [Field] {
        func frameType(_ t: UInt64) -> Field { Field("Frame", .integer(t, .named(bytes: 1, AD.Eddystone.frameNames))) }
        func power(_ name: StaticString, _ v: Int8) -> Field { Field(.txPower, name, .integer(UInt64(UInt8(bitPattern: v)), .signed(bytes: 1, unit: "dBm"))) }
        switch frame {
        case let .uid(tx, namespace, instance):
            return [frameType(0x00), power("TX Power at 0 m", tx), Field("Namespace", .bytes(namespace)), Field("Instance", .bytes(instance))]
        case let .url(tx, url):
            return [frameType(0x10), power("TX Power at 0 m", tx), Field("URL", .text(url))]
        case let .tlm(t):
            let temperature: String
            if t.temperatureRaw == 0x8000 {
                temperature = "not supported"
            } else {
                let v = Int(Int16(bitPattern: t.temperatureRaw))
                let magnitude = v.magnitude
                let hundredths = Int(magnitude % 256 * 100 / 256)   // safe: constant divisors
                temperature = "\(v < 0 ? "-" : "")\(magnitude / 256).\(hundredths < 10 ? "0" : "")\(hundredths) °C"
            }
            return [frameType(0x20), Field("Version", .integer(0, .hex(bytes: 1))),
                    Field("Battery Voltage", .integer(UInt64(t.batteryMillivolts), .scaled(bytes: 2, factor: 1, unit: "mV"))),
                    Field("Temperature", .text(temperature)),
                    Field("Advertising PDU Count", .integer(UInt64(t.advertisingCount), .decimal(bytes: 4))),
                    Field("Time Since Power-On", .integer(UInt64(t.uptimeDeciseconds), .scaled(bytes: 4, factor: 0.1, unit: "s")))]
        case let .encryptedTLM(data, salt, mic):
            return [frameType(0x20), Field("Version", .integer(1, .hex(bytes: 1))), Field("Encrypted TLM", .bytes(data)),
                    Field("Salt", .integer(UInt64(salt), .hex(bytes: 2))), Field("MIC", .integer(UInt64(mic), .hex(bytes: 2)))]
        case let .eid(tx, eid):
            return [frameType(0x30), power("TX Power at 0 m", tx), Field("EID", .bytes(eid))]
        case let .unknown(type, data):
            return [frameType(UInt64(type)), Field("Data", .bytes(data))]
        }
    }
}
