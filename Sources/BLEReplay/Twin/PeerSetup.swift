import BLEBytes
import BLEProtocol

/// The twin's own little host for its controller: commands sent and answered one at a time,
/// then the peripheral set up as the recording shows (Core v5.4 Vol 6 Part B 4.4.2 advertising;
/// Vol 4 Part E 7.8.4–7.8.9 legacy, 7.8.53–7.8.56 extended commands).
extension PeerEngine {
    /// LE Set Advertising Enable (7.8.9) on; LE Set Extended Advertising Enable (7.8.56) on for set 0,
    /// no duration, no event limit.
    static let legacyAdvertisingOn: [ParamKey: HCICommandEncoding.Value] = [HCIKey.advertisingEnable: .int(1)]
    static let extendedAdvertisingOn: [ParamKey: HCICommandEncoding.Value] = [
        HCIKey.enable: .int(1),
        HCIKey.numSets: .list([[HCIKey.advertisingHandle: .int(0), HCIKey.duration: .int(0),
                                      HCIKey.maxExtendedAdvertisingEvents: .int(0)]]),
    ]

    /// Sends a command built from the table without waiting for its answer (the event loop reads
    /// it). A command the table cannot build is an error, never an empty packet.
    func sendCommand(_ opcode: HCIOpcode, _ values: [ParamKey: HCICommandEncoding.Value]) throws(TransportError) {
        let bytes: [UInt8]
        do { bytes = try HCICommandEncoding.command(opcode, values) } catch {
            throw TransportError(.io, "cannot build \(HCIDecoder.commandName(opcode)): \(error)")
        }
        try transmit(H4Packet(.command, bytes))
    }

    /// Sends a command built from the table and waits for its Command Complete / Status;
    /// returns (status, return parameters after the status).
    @discardableResult
    func command(_ opcode: HCIOpcode, _ values: [ParamKey: HCICommandEncoding.Value] = [:]) throws(TransportError) -> (status: UInt8, returns: [UInt8]) {
        let bytes: [UInt8]
        do { bytes = try HCICommandEncoding.command(opcode, values) } catch {
            throw TransportError(.io, "cannot build \(HCIDecoder.commandName(opcode)): \(error)")
        }
        try transmit(H4Packet(.command, bytes))
        let deadline = Clock.now() + options.timeout
        while Clock.now() < deadline {
            guard let packet = try transport.receive(timeout: deadline - Clock.now()) else { continue }
            capture?.log(packet, outgoing: false)
            if packet.type == .event, let answer = Self.answer(to: opcode, in: packet.bytes) { return answer }
        }
        throw TransportError(.timeout, "\(transport.name): no answer to \(HCIDecoder.commandName(opcode)) within \(ReplayEngine.seconds(options.timeout))")
    }

    /// The status and return parameters (after the status) of `opcode`'s Command Complete, or the
    /// status of its Command Status, when `event` is one (Core v5.4 Vol 4 Part E 7.7.14, 7.7.15).
    static func answer(to opcode: HCIOpcode, in event: [UInt8]) -> (status: UInt8, returns: [UInt8])? {
        event.withUnsafeBytes { raw -> (status: UInt8, returns: [UInt8])? in
            var r = ByteReader(raw)
            switch try? HCIEvent.decode(&r) {
            case let .commandComplete(c)? where c.opcode == opcode:
                let returns = c.returnParameters
                return (c.status?.rawValue ?? 0, Array(raw[returns.offset ..< returns.offset + returns.count]))
            case let .commandStatus(status, _, answered)? where answered == opcode:
                return (status.rawValue, [])
            default:
                return nil
            }
        }
    }

    /// The ACL buffer size in `answer`, the return parameters of (LE) Read Buffer Size.
    static func bufferSize(_ opcode: HCIOpcode, _ answer: (status: UInt8, returns: [UInt8])) -> BufferSize? {
        guard answer.status == 0 else { return nil }
        return answer.returns.withUnsafeBytes { raw in
            var r = ByteReader(raw)
            return (try? BufferSize.decode(opcode, &r)) ?? nil
        }
    }

    /// Reset, event masks, buffer sizes, address, advertising. Returns the address advertised.
    func setUp() throws(TransportError) -> (BDAddr, LEAddressType) {
        try command(.reset)
        // Disconnection Complete (bit 4), Encryption Change (7), LE Meta (61) and the defaults.
        try command(.setEventMask, [HCIKey.eventMask: .int(0x3DBF_F807_FFFB_FFFF)])
        // LE Connection Complete, Advertising Report, Connection Update Complete, Read Remote
        // Features Complete, Long Term Key Request (the defaults, 7.8.1).
        try command(.leSetEventMask, [HCIKey.leEventMask: .int(0x1F)])
        // LE buffers, or the shared BR/EDR ones when the LE length is 0 (Core v5.4 Vol 4 Part E 7.8.2).
        if let le = Self.bufferSize(.leReadBufferSize, try command(.leReadBufferSize)), le.aclLength != 0 {
            aclMaxLength = Int(le.aclLength)
            aclCredits = Int(le.aclPackets)
        } else if let br = Self.bufferSize(.readBufferSize, try command(.readBufferSize)) {
            aclMaxLength = Int(br.aclLength)
            aclCredits = Int(br.aclPackets)
        }
        aclCredits = max(1, aclCredits)

        // The address: the recorded one when the controller can take it.
        var address = twin.device, type = twin.deviceType
        if type == .randomDevice {
            if try command(.leSetRandomAddress, [HCIKey.randomAddress: .address(address)]).status != 0 {
                address = Self.randomStatic(from: address)
                notes.append("the controller refused the recorded random address \(twin.device); advertising as random static \(address)")
                try command(.leSetRandomAddress, [HCIKey.randomAddress: .address(address)])
            }
        } else {
            let own = try command(.readBDAddr)
            let mine = own.returns.count >= 6 ? BDAddr(own.returns.prefix(6).reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }) : nil
            if mine != address {
                address = Self.randomStatic(from: twin.device)
                type = .randomDevice
                notes.append("the recorded public address \(twin.device) cannot be taken by this controller (it is \(mine.map(\.description) ?? "unknown")); advertising as random static \(address)")
                try command(.leSetRandomAddress, [HCIKey.randomAddress: .address(address)])
            }
        }

        let adv = twin.advertising ?? TwinRecording.Advertising()
        if twin.advertising == nil { notes.append("no advertising of \(twin.device) in the recording: advertising with no data") }
        // Interval: the median gap between reports as heard, in 0.625 ms units (7.8.5). Beside a
        // replay under `--timing fast` the shortest (20 ms, the legacy minimum of 7.8.5): how soon
        // the replayed host's initiator finds the twin is radio timing, and a recorded gap of
        // seconds would make it miss the wait for the connection complete.
        var units = UInt64(max(0x20, min(0x4000, (adv.intervalMicros ?? 100_000) / 625)))
        if connectionsAllowed != nil, options.timing == .fast, units > 0x20 {
            notes.append("advertising every 20 ms (--timing fast; \(units * 625 / 1000) ms as heard in the recording)")
            units = 0x20
        }
        let ownType = UInt64(type.rawValue)
        if adv.extended || adv.data.count > 31 || (adv.scanResponse?.count ?? 0) > 31 {
            // Properties: connectable (bit 0), scannable (bit 1) only with a scan response (7.8.53).
            let properties: UInt64 = (adv.connectable ? 0x01 : 0) | (adv.scanResponse != nil && !adv.connectable ? 0x02 : 0)
            try check(command(.leSetExtendedAdvertisingParameters, [
                HCIKey.advertisingHandle: .int(0), HCIKey.advertisingEventProperties: .int(properties),
                HCIKey.primaryAdvertisingIntervalMin: .int(units), HCIKey.primaryAdvertisingIntervalMax: .int(units),
                HCIKey.primaryAdvertisingChannelMap: .int(7), HCIKey.ownAddressType: .int(ownType),
                HCIKey.peerAddressType: .int(0), HCIKey.peerAddress: .address(BDAddr(0)), HCIKey.advertisingFilterPolicy: .int(0),
                HCIKey.advertisingTXPower: .int(0x7F), HCIKey.primaryAdvertisingPHY: .int(1),
                HCIKey.secondaryAdvertisingMaxSkip: .int(0), HCIKey.secondaryAdvertisingPHY: .int(1), HCIKey.advertisingSID: .int(0),
                HCIKey.scanRequestNotificationEnable: .int(0)]), "LE Set Extended Advertising Parameters")
            if type == .randomDevice {
                try check(command(.leSetAdvertisingSetRandomAddress, [HCIKey.advertisingHandle: .int(0), HCIKey.randomAddress: .address(address)]),
                          "LE Set Advertising Set Random Address")
            }
            try check(command(.leSetExtendedAdvertisingData, [HCIKey.advertisingHandle: .int(0), HCIKey.operation: .int(3),
                                                              HCIKey.fragmentPreference: .int(1),
                                                              HCIKey.advertisingDataLength: .int(UInt64(adv.data.count)),
                                                              HCIKey.advertisingData: .bytes(adv.data)]), "LE Set Extended Advertising Data")
            if let scan = adv.scanResponse, !adv.connectable {
                try check(command(.leSetExtendedScanResponseData, [HCIKey.advertisingHandle: .int(0), HCIKey.operation: .int(3),
                                                                   HCIKey.fragmentPreference: .int(1),
                                                                   HCIKey.scanResponseDataLength: .int(UInt64(scan.count)),
                                                                   HCIKey.scanResponseData: .bytes(scan)]), "LE Set Extended Scan Response Data")
            } else if adv.scanResponse != nil {
                notes.append("the recorded scan response is not sent: connectable extended advertising is not scannable (Core v5.4 Vol 4 Part E 7.8.53)")
            }
            if connectionsAllowed == nil {
                try check(command(.leSetExtendedAdvertisingEnable, Self.extendedAdvertisingOn), "LE Set Extended Advertising Enable")
            }
        } else {
            // Type 0 ADV_IND (connectable, scannable), 3 ADV_NONCONN_IND.
            try check(command(.leSetAdvertisingParameters, [
                HCIKey.advertisingIntervalMin: .int(units), HCIKey.advertisingIntervalMax: .int(units),
                HCIKey.advertisingType: .int(adv.connectable ? 0 : 3), HCIKey.ownAddressType: .int(ownType),
                HCIKey.peerAddressType: .int(0), HCIKey.peerAddress: .address(BDAddr(0)),
                HCIKey.advertisingChannelMap: .int(7), HCIKey.advertisingFilterPolicy: .int(0)]), "LE Set Advertising Parameters")
            try check(command(.leSetAdvertisingData, [HCIKey.advertisingDataLength: .int(UInt64(adv.data.count)),
                                                      HCIKey.advertisingData: .bytes(Self.padded(adv.data))]), "LE Set Advertising Data")
            if let scan = adv.scanResponse {
                try check(command(.leSetScanResponseData, [HCIKey.scanResponseDataLength: .int(UInt64(scan.count)),
                                                           HCIKey.scanResponseData: .bytes(Self.padded(scan))]), "LE Set Scan Response Data")
            }
            if connectionsAllowed == nil { try check(command(.leSetAdvertisingEnable, Self.legacyAdvertisingOn), "LE Set Advertising Enable") }
        }
        extendedAdvertising = adv.extended || adv.data.count > 31 || (adv.scanResponse?.count ?? 0) > 31
        return (address, type)
    }

    private func check(_ answer: (status: UInt8, returns: [UInt8]), _ name: String) throws(TransportError) {
        guard answer.status == 0 else {
            throw TransportError(.io, "\(transport.name): \(name) failed: \(HCIStatus(rawValue: answer.status))")
        }
    }

    /// Legacy advertising data is a fixed 31-byte parameter (7.8.7).
    static func padded(_ data: [UInt8]) -> [UInt8] { Array(data.prefix(31)) + [UInt8](repeating: 0, count: max(0, 31 - data.count)) }

    /// A random static address (Core v5.4 Vol 6 Part B 1.3.2.1: the two top bits 1) made from `address`.
    static func randomStatic(from address: BDAddr) -> BDAddr { BDAddr(address.value | 0xC000_0000_0000) }
}
