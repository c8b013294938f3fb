import BLEBytes

/// Typed HCI events for the analysis pass: only the events the session model and detectors use,
/// decoded without allocation (lists stay `ByteReader` views). Everything else is `.other`.
/// Display decoding is table-driven (`HCIDecoder`); this is the fast path.
public enum HCIEvent: Sendable {
    case connectionComplete(ConnectionComplete)
    case disconnectionComplete(status: HCIStatus, handle: UInt16, reason: HCIStatus)
    /// `mode`: Encryption_Enabled as sent (`LinkCipher.of` tells E0 from AES-CCM).
    case encryptionChange(status: HCIStatus, handle: UInt16, enabled: Bool, keySize: UInt8?, mode: UInt8)
    case encryptionKeyRefreshComplete(status: HCIStatus, handle: UInt16)
    case commandComplete(CommandComplete)
    case commandStatus(status: HCIStatus, numPackets: UInt8, opcode: HCIOpcode)
    /// Handle/count pairs: iterate with `CompletedPackets.forEach`.
    case numberOfCompletedPackets(CompletedPackets)
    case connectionUpdateComplete(status: HCIStatus, handle: UInt16, intervalUnits: UInt16, latency: UInt16, timeoutUnits: UInt16)
    case dataLengthChange(handle: UInt16, maxTxOctets: UInt16, maxTxTime: UInt16, maxRxOctets: UInt16, maxRxTime: UInt16)
    case phyUpdateComplete(status: HCIStatus, handle: UInt16, txPHY: UInt8, rxPHY: UInt8)
    /// Legacy or extended advertising reports: iterate with `AdvertisingReports.forEach`.
    case advertisingReports(AdvertisingReports)
    case advertisingSetTerminated(status: HCIStatus, advertisingHandle: UInt8, connectionHandle: UInt16)
    /// LE Long Term Key Request (7.7.65.5): the Random_Number and Encrypted_Diversifier name the key.
    case longTermKeyRequest(handle: UInt16, random: UInt64, ediv: UInt16)
    /// Inquiry Complete (Core v5.4 Vol 4 Part E 7.7.1): the inquiry ended.
    case inquiryComplete(status: HCIStatus)
    case hardwareError(code: UInt8)
    case dataBufferOverflow
    /// BR/EDR Secure Simple Pairing (Core v5.4 Vol 4 Part E 7.7.42–7.7.45): the controller asks the host
    /// to confirm a number or for a passkey; Simple Pairing Complete ends it with a status.
    case userConfirmationRequest(address: BDAddr, value: UInt32)
    case userPasskeyRequest(address: BDAddr)
    case simplePairingComplete(status: HCIStatus, address: BDAddr)
    /// Android's Bluetooth Quality Report, a link-quality one (Vendor Specific event, sub-event 0x58).
    case qualityReport(QualityReport.LinkQuality)
    /// IO Capability Response (7.7.41): the peer's IO capability and authentication requirements.
    case ioCapabilityResponse(address: BDAddr, capabilities: SSPCapabilities)
    /// Link Key Request (7.7.23): the controller asks the host for a stored key.
    case linkKeyRequest(address: BDAddr)
    /// Link Key Notification (7.7.24): a new link key and its type (the key itself is not kept).
    case linkKeyNotification(address: BDAddr, keyType: LinkKeyType)
    /// Authentication Complete (7.7.6).
    case authenticationComplete(status: HCIStatus, handle: UInt16)
    /// LE Periodic Advertising Sync Lost (7.7.65.16): the controller stopped following a periodic advertising train.
    case periodicSyncLost(syncHandle: UInt16)
    /// Role Change (7.7.18): a role switch of the BR/EDR link to `address` ended; `role` 0 central, 1 peripheral.
    case roleChange(status: HCIStatus, address: BDAddr, role: UInt8)
    /// Read Remote Extended Features Complete (7.7.34): page `page` of the peer's LMP features (`LMPFeatures`).
    case remoteExtendedFeatures(status: HCIStatus, handle: UInt16, page: UInt8, features: UInt64)
    /// Synchronous Connection Complete (7.7.35): an SCO or eSCO link (voice) to `address` opened on `handle`.
    case synchronousConnectionComplete(status: HCIStatus, handle: UInt16, address: BDAddr, linkType: UInt8)
    case other(code: UInt8, subevent: UInt8?)
}

/// The Secure Connections bits of the LMP feature pages (Core v5.4 Vol 2 Part C 3.3, Table 3.2): page 1
/// bit 3 "Secure Connections (Host Support)", page 2 bit 8 "Secure Connections (Controller Support)".
/// BR/EDR Secure Connections is used only when both hosts and both controllers support it (Vol 2 Part F
/// 4.2; Vol 3 Part C 5.2.2.6): its link keys are P-256 (types 0x07/0x08) and its cipher AES-CCM.
public enum LMPFeatures {
    /// Whether the page says Secure Connections support (host on page 1, controller on page 2); nil for other pages.
    public static func secureConnections(page: UInt8, features: UInt64) -> Bool? {
        switch page {
        case 1: features & (1 << 3) != 0
        case 2: features & (1 << 8) != 0
        default: nil
        }
    }
}

/// LE Connection Complete, LE Enhanced Connection Complete v1/v2 (Core v5.4 Vol 4 Part E 7.7.65.1,
/// 7.7.65.10) and BR/EDR Connection Complete (7.7.3), normalised.
public struct ConnectionComplete: Sendable {
    public var status: HCIStatus
    public var handle: UInt16
    /// 0 central, 1 peripheral (LE); nil for BR/EDR.
    public var role: UInt8?
    public var peerAddressType: LEAddressType?
    public var peerAddress: BDAddr
    /// ×1.25 ms (LE only).
    public var intervalUnits: UInt16
    public var latency: UInt16
    /// ×10 ms (LE only).
    public var timeoutUnits: UInt16
    public var isLE: Bool

    public init(status: HCIStatus, handle: UInt16, role: UInt8?, peerAddressType: LEAddressType?, peerAddress: BDAddr,
                intervalUnits: UInt16, latency: UInt16, timeoutUnits: UInt16, isLE: Bool) {
        (self.status, self.handle, self.role, self.peerAddressType, self.peerAddress) = (status, handle, role, peerAddressType, peerAddress)
        (self.intervalUnits, self.latency, self.timeoutUnits, self.isLE) = (intervalUnits, latency, timeoutUnits, isLE)
    }

    public var intervalMicros: Int64 { Int64(intervalUnits) * 1250 }
}

/// Command Complete with the return parameters left as a reader.
public struct CommandComplete: Sendable {
    public var numPackets: UInt8
    public var opcode: HCIOpcode
    /// The first return parameter, when present (every command's status except NOP).
    public var status: HCIStatus?
    /// Return parameters after the status byte.
    public var returnParameters: ByteRange
}

/// The handle/count pairs of Number Of Completed Packets (Core v5.4 Vol 4 Part E 7.7.19).
public struct CompletedPackets: Sendable {
    public let count: Int
    public let pairs: ByteRange

    /// Calls `body(handle, completed)` for each pair; the bytes are re-read from the frame.
    @inlinable
    public func forEach(in bytes: UnsafeRawBufferPointer, base: Int, _ body: (UInt16, UInt16) -> Void) {
        guard fits(in: bytes, base: base) else { return }
        for i in 0..<count {
            let p = pair(i, in: bytes, base: base)
            body(p.handle, p.completed)
        }
    }

    /// The pairs lie within `bytes` (the frame's payload, starting at file offset `base`).
    @inlinable
    public func fits(in bytes: UnsafeRawBufferPointer, base: Int) -> Bool {
        let start = pairs.offset - base
        return start >= 0 && start + count * 4 <= bytes.count
    }

    /// Pair `i` (`fits` first): the connection handle (12 bits) and its completed packets. A loop over
    /// these keeps the caller's body inline, where a closure passed to `forEach` was a call per pair
    /// once the body grew (the session model's, ~30 instructions a pair).
    @inlinable
    public func pair(_ i: Int, in bytes: UnsafeRawBufferPointer, base: Int) -> (handle: UInt16, completed: UInt16) {
        let o = pairs.offset - base + i * 4
        let h = UInt16(bytes[o]) | UInt16(bytes[o + 1]) << 8
        let c = UInt16(bytes[o + 2]) | UInt16(bytes[o + 3]) << 8
        return (h & 0x0FFF, c)
    }
}

/// The reports of an LE (Extended) Advertising Report event (7.7.65.2, 7.7.65.13), validated once.
public struct AdvertisingReports: Sendable {
    public let extended: Bool
    public let count: Int
    public let reports: ByteRange
}

/// One advertising report.
public struct AdvertisingReport: Sendable {
    /// Legacy: ADV_IND…SCAN_RSP (0–4). Extended: the event type bits.
    public var eventType: UInt16
    public var extended: Bool
    public var addressType: LEAddressType
    public var address: BDAddr
    public var rssi: Int8
    public var txPower: Int8?
    public var data: ByteRange

    /// Legacy PDUs: legacy reports, or extended reports with the legacy bit (0x10).
    public var isLegacyPDU: Bool { !extended || eventType & 0x10 != 0 }
    public var isScanResponse: Bool { extended ? eventType & 0x08 != 0 : eventType == 4 }
    public var isConnectable: Bool { extended ? eventType & 0x01 != 0 : eventType == 0 || eventType == 1 }
}

extension AdvertisingReports {
    /// Calls `body` for each report, reading from the frame's bytes.
    public func forEach(in bytes: UnsafeRawBufferPointer, base: Int, _ body: (AdvertisingReport) -> Void) {
        let start = reports.offset - base
        guard start >= 0, start + reports.count <= bytes.count else { return }
        var r = ByteReader(UnsafeRawBufferPointer(rebasing: bytes[start ..< start + reports.count]), base: reports.offset)
        for _ in 0..<count {
            guard let report = try? Self.read(&r, extended: extended) else { return }
            body(report)
        }
    }

    static func read(_ r: inout ByteReader, extended: Bool) throws(DecodeError) -> AdvertisingReport {
        if extended {
            let type = try r.u16le("Event Type")
            let addressType = LEAddressType(rawValue: try r.u8("Address Type"))
            let address = try r.address("Address")
            try r.skip(3, "PHYs and SID")
            let tx = Int8(bitPattern: try r.u8("TX Power"))
            let rssi = Int8(bitPattern: try r.u8("RSSI"))
            try r.skip(9, "Interval and Direct Address")
            let length = Int(try r.u8("Data Length"))
            let data = try r.slice(length, "Data")
            return AdvertisingReport(eventType: type, extended: true, addressType: addressType, address: address,
                                     rssi: rssi, txPower: tx == 127 ? nil : tx, data: data.remainingRange)
        }
        let type = UInt16(try r.u8("Event Type"))
        let addressType = LEAddressType(rawValue: try r.u8("Address Type"))
        let address = try r.address("Address")
        let length = Int(try r.u8("Data Length"))
        let data = try r.slice(length, "Data")
        let rssi = Int8(bitPattern: try r.u8("RSSI"))
        return AdvertisingReport(eventType: type, extended: false, addressType: addressType, address: address,
                                 rssi: rssi, txPower: nil, data: data.remainingRange)
    }

    /// Walks every report once to check the lengths (so a malformed event is reported as such).
    static func validate(_ r: ByteReader, count: Int, extended: Bool) throws(DecodeError) {
        var r = r
        for _ in 0..<count { _ = try read(&r, extended: extended) }
        try r.expectEnd("Advertising Reports")
    }
}

extension HCIEvent {
    /// Decodes the events the analysis needs from an HCI event packet (header included).
    /// - Throws: `DecodeError` when a known event is malformed.
    public static func decode(_ r: inout ByteReader) throws(DecodeError) -> HCIEvent {
        let code = try r.u8("Event Code")
        let plen = Int(try r.u8("Parameter Total Length"))
        var p = try r.slice(min(plen, r.remaining), "Parameters")
        switch code {
        // The fixed-layout events read through their table rows (`EventLayout`, `LEMetaLayout`).
        case HCIEventCode.disconnectionComplete:
            let f = EventLayout.disconnectionComplete
            return .disconnectionComplete(status: HCIStatus(rawValue: try f.status.u8(p)), handle: try f.handle.u16(p) & 0x0FFF,
                                          reason: HCIStatus(rawValue: try f.reason.u8(p)))
        case HCIEventCode.connectionComplete:
            let status = HCIStatus(rawValue: try p.u8("Status"))
            let handle = try p.u16le("Handle") & 0x0FFF
            let address = try p.address("Address")
            return .connectionComplete(ConnectionComplete(status: status, handle: handle, role: nil, peerAddressType: nil,
                                                          peerAddress: address, intervalUnits: 0, latency: 0, timeoutUnits: 0, isLE: false))
        case HCIEventCode.encryptionChange, HCIEventCode.encryptionChangeV2:
            let f = code == HCIEventCode.encryptionChangeV2 ? EventLayout.encryptionChangeV2 : EventLayout.encryptionChange
            let status = HCIStatus(rawValue: try f.status.u8(p))
            let handle = try f.handle.u16(p) & 0x0FFF
            let mode = try f.enabled.u8(p)
            let keySize = try f.keySize.map { k throws(DecodeError) in try k.u8(p) }
            return .encryptionChange(status: status, handle: handle, enabled: mode != 0, keySize: keySize, mode: mode)
        case HCIEventCode.encryptionKeyRefreshComplete:
            let f = EventLayout.keyRefresh
            return .encryptionKeyRefreshComplete(status: HCIStatus(rawValue: try f.status.u8(p)), handle: try f.handle.u16(p) & 0x0FFF)
        case HCIEventCode.commandComplete:
            let n = try p.u8("Num HCI Command Packets")
            let opcode = HCIOpcode(rawValue: try p.u16le("Opcode"))
            let status = p.remaining > 0 ? HCIStatus(rawValue: try p.u8("Status")) : nil
            return .commandComplete(CommandComplete(numPackets: n, opcode: opcode, status: status, returnParameters: p.remainingRange))
        case HCIEventCode.commandStatus:
            let status = HCIStatus(rawValue: try p.u8("Status"))
            let n = try p.u8("Num HCI Command Packets")
            return .commandStatus(status: status, numPackets: n, opcode: HCIOpcode(rawValue: try p.u16le("Opcode")))
        case HCIEventCode.numberOfCompletedPackets:
            let n = Int(try p.u8("Num Handles"))
            let pairs = try p.slice(n * 4, "Handles")
            return .numberOfCompletedPackets(CompletedPackets(count: n, pairs: pairs.remainingRange))
        case HCIEventCode.inquiryComplete:
            return .inquiryComplete(status: HCIStatus(rawValue: try p.u8("Status")))
        case HCIEventCode.hardwareError:
            return .hardwareError(code: try EventLayout.hardwareCode.u8(p))
        case HCIEventCode.readRemoteExtendedFeaturesComplete:
            let f = EventLayout.remoteExtendedFeatures
            return .remoteExtendedFeatures(status: HCIStatus(rawValue: try f.status.u8(p)), handle: try f.handle.u16(p) & 0x0FFF,
                                           page: try f.page.u8(p), features: try f.features.u64(p))
        case HCIEventCode.synchronousConnectionComplete:
            let f = EventLayout.synchronousConnectionComplete
            return .synchronousConnectionComplete(status: HCIStatus(rawValue: try f.status.u8(p)), handle: try f.handle.u16(p) & 0x0FFF,
                                                  address: try f.address.address(p), linkType: try f.linkType.u8(p))
        case HCIEventCode.dataBufferOverflow:
            return .dataBufferOverflow
        case HCIEventCode.userConfirmationRequest:
            return .userConfirmationRequest(address: try p.address("Address"), value: try p.u32le("Numeric Value"))
        case HCIEventCode.userPasskeyRequest:
            return .userPasskeyRequest(address: try p.address("Address"))
        case HCIEventCode.simplePairingComplete:
            return .simplePairingComplete(status: HCIStatus(rawValue: try p.u8("Status")), address: try p.address("Address"))
        case HCIEventCode.ioCapabilityResponse:
            let address = try p.address("BD_ADDR")
            let io = SMP.IOCapability(rawValue: try p.u8("IO_Capability"))
            try p.skip(1, "OOB_Data_Present")
            return .ioCapabilityResponse(address: address, capabilities: SSPCapabilities(io: io, authReq: try p.u8("Authentication_Requirements")))
        case HCIEventCode.linkKeyRequest:
            return .linkKeyRequest(address: try p.address("BD_ADDR"))
        case HCIEventCode.linkKeyNotification:
            let address = try p.address("BD_ADDR")
            try p.skip(16, "Link_Key")
            return .linkKeyNotification(address: address, keyType: LinkKeyType(rawValue: try p.u8("Key_Type")))
        case HCIEventCode.authenticationComplete:
            return .authenticationComplete(status: HCIStatus(rawValue: try p.u8("Status")), handle: try p.u16le("Connection_Handle") & 0x0FFF)
        case HCIEventCode.roleChange:
            let status = HCIStatus(rawValue: try p.u8("Status"))
            return .roleChange(status: status, address: try p.address("BD_ADDR"), role: try p.u8("New_Role"))
        case HCIEventCode.leMeta:
            return try leMeta(&p)
        case HCIEventCode.vendor:
            // A vendor's own layout: never malformed here; a quality report when it reads as one.
            return QualityReport.linkQuality(p).map { .qualityReport($0) } ?? .other(code: code, subevent: nil)
        default:
            return .other(code: code, subevent: nil)
        }
    }

    static func leMeta(_ p: inout ByteReader) throws(DecodeError) -> HCIEvent {
        let sub = try p.u8("Subevent Code")
        switch sub {
        // Read through the LE Meta table's rows by parameter key (`LEMetaLayout`): the layout is the row's.
        case LESubevent.connectionComplete, LESubevent.enhancedConnectionComplete, LESubevent.enhancedConnectionCompleteV2:
            let f = sub == LESubevent.connectionComplete ? LEMetaLayout.connectionComplete
                : sub == LESubevent.enhancedConnectionComplete ? LEMetaLayout.enhancedConnectionComplete : LEMetaLayout.enhancedConnectionCompleteV2
            let status = HCIStatus(rawValue: try f.status.u8(p))
            let handle = try f.handle.u16(p) & 0x0FFF
            let role = try f.role.u8(p)
            let type = LEAddressType(rawValue: try f.peerAddressType.u8(p))
            let address = try f.peerAddress.address(p)
            let interval = try f.interval.u16(p)
            let latency = try f.latency.u16(p)
            let timeout = try f.timeout.u16(p)
            return .connectionComplete(ConnectionComplete(status: status, handle: handle, role: role, peerAddressType: type,
                                                          peerAddress: address, intervalUnits: interval, latency: latency,
                                                          timeoutUnits: timeout, isLE: true))
        case LESubevent.advertisingReport, LESubevent.extendedAdvertisingReport:
            let extended = sub == LESubevent.extendedAdvertisingReport
            let n = Int(try p.u8("Num Reports"))
            let rest = p.rest()
            try AdvertisingReports.validate(rest, count: n, extended: extended)
            return .advertisingReports(AdvertisingReports(extended: extended, count: n, reports: rest.remainingRange))
        case LESubevent.connectionUpdateComplete:
            let f = LEMetaLayout.connectionUpdate
            return .connectionUpdateComplete(status: HCIStatus(rawValue: try f.status.u8(p)), handle: try f.handle.u16(p) & 0x0FFF,
                                             intervalUnits: try f.interval.u16(p), latency: try f.latency.u16(p),
                                             timeoutUnits: try f.timeout.u16(p))
        case LESubevent.dataLengthChange:
            let f = LEMetaLayout.dataLengthChange
            return .dataLengthChange(handle: try f.handle.u16(p) & 0x0FFF, maxTxOctets: try f.maxTxOctets.u16(p),
                                     maxTxTime: try f.maxTxTime.u16(p), maxRxOctets: try f.maxRxOctets.u16(p),
                                     maxRxTime: try f.maxRxTime.u16(p))
        case LESubevent.phyUpdateComplete:
            let f = LEMetaLayout.phyUpdate
            return .phyUpdateComplete(status: HCIStatus(rawValue: try f.status.u8(p)), handle: try f.handle.u16(p) & 0x0FFF,
                                      txPHY: try f.txPHY.u8(p), rxPHY: try f.rxPHY.u8(p))
        case LESubevent.periodicAdvertisingSyncLost:
            return .periodicSyncLost(syncHandle: try LEMetaLayout.periodicSyncLost.u16(p) & 0x0FFF)
        case LESubevent.advertisingSetTerminated:
            let f = LEMetaLayout.advertisingSetTerminated
            return .advertisingSetTerminated(status: HCIStatus(rawValue: try f.status.u8(p)), advertisingHandle: try f.advertisingHandle.u8(p),
                                             connectionHandle: try f.connectionHandle.u16(p) & 0x0FFF)
        case LESubevent.longTermKeyRequest:
            let f = LEMetaLayout.longTermKeyRequest
            return .longTermKeyRequest(handle: try f.handle.u16(p) & 0x0FFF, random: try f.random.u64(p), ediv: try f.ediv.u16(p))
        default:
            return .other(code: HCIEventCode.leMeta, subevent: sub)
        }
    }
}
