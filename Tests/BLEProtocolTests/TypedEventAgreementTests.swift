import BLEBytes
import Testing
@testable import BLEProtocol

/// The typed fast path (`HCIEvent.decode`, which the analysis reads) and the decoding tables (which
/// `packets` shows and `HCIEventEncoding` writes from) describe the same layouts: every event the
/// analysis types is laid out from its table row with distinct values in every parameter, decoded
/// typed, and each typed field must be the value given to the parameter of that name. A layout
/// written differently in the two places (an order, a width, a byte order) fails here.
@Suite("Typed events agree with the event tables")
struct TypedEventAgreementTests {
    static let peer = BDAddr(0xC0_5E_1A_3B_4C_5D)
    static let local = BDAddr(0x11_22_33_44_55_66)
    static let peerRPA = BDAddr(0x7A_6B_5C_4D_3E_2F)

    @Test("Disconnection Complete (7.7.5)")
    func disconnectionComplete() throws {
        let e = try HCIEventEncoding.event(0x05, [ParamKey("Status"): .int(0x00), ParamKey("Connection_Handle"): .int(0x0A42), ParamKey("Reason"): .int(0x13)])
        guard case let .disconnectionComplete(status, handle, reason) = try HCITest.typedEvent(e) else { Issue.record("not typed"); return }
        #expect(status == .success && handle == 0x0A42 && reason.rawValue == 0x13)
    }

    @Test("Encryption Change v1 and v2 (7.7.8, 7.7.8.v2)")
    func encryptionChange() throws {
        let v1 = try HCIEventEncoding.event(0x08, [ParamKey("Status"): .int(0x06), ParamKey("Connection_Handle"): .int(0x0041), ParamKey("Encryption_Enabled"): .int(1)])
        guard case let .encryptionChange(s1, h1, on1, size1, mode1) = try HCITest.typedEvent(v1) else { Issue.record("v1 not typed"); return }
        #expect(s1.rawValue == 0x06 && h1 == 0x0041 && on1 && size1 == nil && mode1 == 1)
        let v2 = try HCIEventEncoding.event(0x59, [ParamKey("Status"): .int(0), ParamKey("Connection_Handle"): .int(0x0043), ParamKey("Encryption_Enabled"): .int(0), ParamKey("Encryption_Key_Size"): .int(7)])
        guard case let .encryptionChange(s2, h2, on2, size2, _) = try HCITest.typedEvent(v2) else { Issue.record("v2 not typed"); return }
        #expect(s2 == .success && h2 == 0x0043 && !on2 && size2 == 7)
    }

    @Test("BR/EDR security events: IO Capability Response (7.7.41), Link Key Notification (7.7.24)")
    func classicSecurity() throws {
        let io = try HCIEventEncoding.event(0x32, [ParamKey("BD_ADDR"): .address(BDAddr(0x112233445566)), ParamKey("IO_Capability"): .int(3),
                                                   ParamKey("OOB_Data_Present"): .int(0), ParamKey("Authentication_Requirements"): .int(2)])
        guard case let .ioCapabilityResponse(a, caps) = try HCITest.typedEvent(io) else { Issue.record("IO Capability Response not typed"); return }
        #expect(a == BDAddr(0x112233445566) && caps.io == .noInputNoOutput && caps.authReq == 2 && !caps.mitm && caps.bonding)
        let key = try HCIEventEncoding.event(0x18, [ParamKey("BD_ADDR"): .address(BDAddr(0x112233445566)), ParamKey("Link_Key"): .bytes([UInt8](repeating: 0xAA, count: 16)),
                                                    ParamKey("Key_Type"): .int(4)])
        guard case let .linkKeyNotification(a2, type) = try HCITest.typedEvent(key) else { Issue.record("Link Key Notification not typed"); return }
        #expect(a2 == BDAddr(0x112233445566) && type.rawValue == 4 && !type.isAuthenticated && !type.isSecureConnections)
    }

    @Test("Encryption Key Refresh Complete (7.7.39)")
    func keyRefresh() throws {
        let e = try HCIEventEncoding.event(0x30, [ParamKey("Status"): .int(0x3D), ParamKey("Connection_Handle"): .int(0x0123)])
        guard case let .encryptionKeyRefreshComplete(status, handle) = try HCITest.typedEvent(e) else { Issue.record("not typed"); return }
        #expect(status.rawValue == 0x3D && handle == 0x0123)
    }

    @Test("Hardware Error (7.7.16)")
    func hardwareError() throws {
        guard case let .hardwareError(code) = try HCITest.typedEvent(try HCIEventEncoding.event(0x10, [ParamKey("Hardware_Code"): .int(0x5A)])) else {
            Issue.record("not typed"); return
        }
        #expect(code == 0x5A)
    }

    @Test("Read Remote Extended Features Complete (7.7.34), Synchronous Connection Complete (7.7.35)")
    func classicLinkEvents() throws {
        let page = try HCIEventEncoding.event(0x23, [ParamKey("Status"): .int(0), ParamKey("Connection_Handle"): .int(0x0B42), ParamKey("Page_Number"): .int(2),
                                                     ParamKey("Maximum_Page_Number"): .int(3), ParamKey("Extended_LMP_Features"): .int(0x0102_0304_0506_0100)])
        guard case let .remoteExtendedFeatures(s1, h1, p1, features) = try HCITest.typedEvent(page) else { Issue.record("Read Remote Extended Features not typed"); return }
        #expect(s1 == .success && h1 == 0x0B42 && p1 == 2 && features == 0x0102_0304_0506_0100)
        #expect(LMPFeatures.secureConnections(page: 2, features: features) == true && LMPFeatures.secureConnections(page: 1, features: features) == false)
        let sco = try HCIEventEncoding.event(0x2C, [ParamKey("Status"): .int(0), ParamKey("Connection_Handle"): .int(0x0101), ParamKey("BD_ADDR"): .address(Self.peer),
                                                    ParamKey("Link_Type"): .int(2), ParamKey("Transmission_Interval"): .int(12), ParamKey("Retransmission_Window"): .int(4),
                                                    ParamKey("RX_Packet_Length"): .int(60), ParamKey("TX_Packet_Length"): .int(61), ParamKey("Air_Mode"): .int(3)])
        guard case let .synchronousConnectionComplete(s2, h2, a2, type) = try HCITest.typedEvent(sco) else { Issue.record("Synchronous Connection Complete not typed"); return }
        #expect(s2 == .success && h2 == 0x0101 && a2 == Self.peer && type == 2)
    }

    @Test("Number Of Completed Packets (7.7.19)")
    func completedPackets() throws {
        let e = try HCIEventEncoding.event(0x13, [ParamKey("Num_Handles"): .list([[ParamKey("Connection_Handle"): .int(0x0040), ParamKey("Num_Completed_Packets"): .int(3)],
                                                                      [ParamKey("Connection_Handle"): .int(0x0E01), ParamKey("Num_Completed_Packets"): .int(0x0102)]])])
        guard case let .numberOfCompletedPackets(p) = try HCITest.typedEvent(e) else { Issue.record("not typed"); return }
        var pairs: [(UInt16, UInt16)] = []
        e.withUnsafeBytes { b in p.forEach(in: b, base: 0) { pairs.append(($0, $1)) } }
        #expect(pairs.map(\.0) == [0x0040, 0x0E01] && pairs.map(\.1) == [3, 0x0102])
    }

    @Test("LE Connection Complete and Enhanced Connection Complete v1/v2 (7.7.65.1, .10, .10 v2)")
    func connectionComplete() throws {
        let common: [ParamKey: HCIEventEncoding.Value] = [
            ParamKey("Status"): .int(0), ParamKey("Connection_Handle"): .int(0x0201), ParamKey("Role"): .int(1), ParamKey("Peer_Address_Type"): .int(1), ParamKey("Peer_Address"): .address(Self.peer),
            ParamKey("Connection_Interval"): .int(0x0018), ParamKey("Peripheral_Latency"): .int(4), ParamKey("Supervision_Timeout"): .int(0x01F4),
            ParamKey("Central_Clock_Accuracy"): .int(2)]
        let enhanced = common.merging([ParamKey("Local_Resolvable_Private_Address"): .address(Self.local),
                                       ParamKey("Peer_Resolvable_Private_Address"): .address(Self.peerRPA)]) { a, _ in a }
        let events = [try HCIEventEncoding.leMeta(0x01, common), try HCIEventEncoding.leMeta(0x0A, enhanced),
                      try HCIEventEncoding.leMeta(0x29, enhanced.merging([ParamKey("Advertising_Handle"): .int(3), ParamKey("Sync_Handle"): .int(0x0FFF)]) { a, _ in a })]
        for e in events {
            guard case let .connectionComplete(c) = try HCITest.typedEvent(e) else { Issue.record("not typed: \(e)"); continue }
            #expect(c.status == .success && c.handle == 0x0201 && c.role == 1 && c.peerAddressType?.rawValue == 1)
            #expect(c.peerAddress == Self.peer && c.intervalUnits == 0x0018 && c.latency == 4 && c.timeoutUnits == 0x01F4 && c.isLE)
        }
    }

    @Test("LE Connection Update Complete (7.7.65.3)")
    func connectionUpdate() throws {
        let e = try HCIEventEncoding.leMeta(0x03, [ParamKey("Status"): .int(0x3B), ParamKey("Connection_Handle"): .int(0x0042), ParamKey("Connection_Interval"): .int(0x0050),
                                                   ParamKey("Peripheral_Latency"): .int(2), ParamKey("Supervision_Timeout"): .int(0x0258)])
        guard case let .connectionUpdateComplete(status, handle, interval, latency, timeout) = try HCITest.typedEvent(e) else {
            Issue.record("not typed"); return
        }
        #expect(status.rawValue == 0x3B && handle == 0x0042 && interval == 0x0050 && latency == 2 && timeout == 0x0258)
    }

    @Test("LE Data Length Change (7.7.65.7)")
    func dataLength() throws {
        let e = try HCIEventEncoding.leMeta(0x07, [ParamKey("Connection_Handle"): .int(0x0044), ParamKey("Max_TX_Octets"): .int(251), ParamKey("Max_TX_Time"): .int(2120),
                                                   ParamKey("Max_RX_Octets"): .int(27), ParamKey("Max_RX_Time"): .int(328)])
        guard case let .dataLengthChange(handle, txO, txT, rxO, rxT) = try HCITest.typedEvent(e) else { Issue.record("not typed"); return }
        #expect(handle == 0x0044 && txO == 251 && txT == 2120 && rxO == 27 && rxT == 328)
    }

    @Test("LE PHY Update Complete (7.7.65.12)")
    func phyUpdate() throws {
        let e = try HCIEventEncoding.leMeta(0x0C, [ParamKey("Status"): .int(0), ParamKey("Connection_Handle"): .int(0x0045), ParamKey("TX_PHY"): .int(2), ParamKey("RX_PHY"): .int(3)])
        guard case let .phyUpdateComplete(status, handle, tx, rx) = try HCITest.typedEvent(e) else { Issue.record("not typed"); return }
        #expect(status == .success && handle == 0x0045 && tx == 2 && rx == 3)
    }

    @Test("LE Periodic Advertising Sync Lost (7.7.65.16)")
    func periodicSyncLost() throws {
        let e = try HCIEventEncoding.leMeta(0x10, [ParamKey("Sync_Handle"): .int(0x0E42)])
        guard case let .periodicSyncLost(handle) = try HCITest.typedEvent(e) else { Issue.record("not typed"); return }
        #expect(handle == 0x0E42)
    }

    @Test("LE Long Term Key Request (7.7.65.5)")
    func longTermKeyRequest() throws {
        let e = try HCIEventEncoding.leMeta(0x05, [ParamKey("Connection_Handle"): .int(0x0046), ParamKey("Random_Number"): .int(0x0102_0304_0506_0708),
                                                   ParamKey("Encrypted_Diversifier"): .int(0xA1B2)])
        guard case let .longTermKeyRequest(handle, random, ediv) = try HCITest.typedEvent(e) else { Issue.record("not typed"); return }
        #expect(handle == 0x0046 && random == 0x0102_0304_0506_0708 && ediv == 0xA1B2)
    }

    @Test("LE Advertising Set Terminated (7.7.65.18)")
    func advertisingSetTerminated() throws {
        let e = try HCIEventEncoding.leMeta(0x12, [ParamKey("Status"): .int(0x43), ParamKey("Advertising_Handle"): .int(5), ParamKey("Connection_Handle"): .int(0x0047),
                                                   ParamKey("Num_Completed_Extended_Advertising_Events"): .int(9)])
        guard case let .advertisingSetTerminated(status, adv, conn) = try HCITest.typedEvent(e) else { Issue.record("not typed"); return }
        #expect(status.rawValue == 0x43 && adv == 5 && conn == 0x0047)
    }

    @Test("LE Extended Advertising Report (7.7.65.13)")
    func extendedAdvertisingReport() throws {
        let ad: [UInt8] = [0x05, 0x09, 0x42, 0x4C, 0x45, 0x21]   // Complete Local Name "BLE!"
        let report: [ParamKey: HCIEventEncoding.Value] = [
            ParamKey("Event_Type"): .int(0x0013), ParamKey("Address_Type"): .int(1), ParamKey("Address"): .address(Self.peer), ParamKey("Primary_PHY"): .int(1),
            ParamKey("Secondary_PHY"): .int(0), ParamKey("Advertising_SID"): .int(0xFF), ParamKey("TX_Power"): .int(UInt64(UInt8(bitPattern: -8))),
            ParamKey("RSSI"): .int(UInt64(UInt8(bitPattern: -61))), ParamKey("Periodic_Advertising_Interval"): .int(0), ParamKey("Direct_Address_Type"): .int(0),
            ParamKey("Direct_Address"): .address(BDAddr(0)), ParamKey("Data"): .lengthPrefixed(ad)]
        let e = try HCIEventEncoding.leMeta(0x0D, [ParamKey("Num_Reports"): .list([report])])
        guard case let .advertisingReports(reports) = try HCITest.typedEvent(e) else { Issue.record("not typed"); return }
        var seen: [AdvertisingReport] = []
        e.withUnsafeBytes { b in reports.forEach(in: b, base: 0) { seen.append($0) } }
        try #require(seen.count == 1)
        let r = seen[0]
        #expect(r.extended && r.eventType == 0x0013 && r.addressType.rawValue == 1 && r.address == Self.peer)
        #expect(r.rssi == -61 && r.txPower == -8)
        #expect(Array(e[r.data.offset ..< r.data.offset + r.data.count]) == ad)
    }
}
