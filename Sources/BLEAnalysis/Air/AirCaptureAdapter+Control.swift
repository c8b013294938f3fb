import BLEBytes
import BLECapture
import BLEProtocol

/// LL Control PDUs (Core v5.4 Vol 6 Part B 2.4.2): the procedures the host would have heard of
/// become session events; the rest are timeline notes.
extension AirCaptureAdapter {
    func control(_ pdu: LLControlPDU, _ p: LLAirPacket, _ i: Int, _ direction: LLDirection, _ frame: Frame,
                 _ analyzer: Analyzer, _ status: inout FrameStatus) {
        let handle = links[i].handle
        let from = direction == .peripheralToCentral ? "peripheral" : "central"
        let session = analyzer.session
        switch pdu {
        case let .connectionUpdate(_, _, interval, latency, timeout, instant):
            links[i].pendingInterval = interval
            // Reported when the procedure is announced, not at its instant.
            parametersUpdated(handle, interval: interval, latency: latency, timeout: timeout, frame, analyzer, &status)
            note(i, session, frame, .parameters, .air("LL_CONNECTION_UPDATE_IND from the \(from), at connection event \(instant)"))
        case let .channelMap(map, instant):
            links[i].channelMap = map
            if let c = session.live[LinkKey(adapter: frame.adapter, handle: handle)] {
                session.emit(.link, .airChannelMap(c, frame: frame.number, time: frame.timestamp, map: map, indication: true))
            }
            note(i, session, frame, .parameters, .air("channel map \(LinkLayerDisplay.channelList(map)) from event \(instant)"))
        case let .terminate(reason):
            let hciReason = HCIStatus(rawValue: reason)
            // The central's host ended it: the story says so.
            if direction != .peripheralToCentral { hostDisconnect(handle, reason: hciReason, frame, analyzer) }
            for side in 0 ... 1 { closeBurst(i, side, session, lost: false) }
            summarize(i, session, time: frame.timestamp, frame: frame.number, ending: "LL_TERMINATE_IND from the \(from): \(hciReason.name)")
            disconnected(handle, reason: hciReason, frame, analyzer, &status)
            end(i)
        case .encryptionRequest:
            note(i, session, frame, .security, .air("LL_ENC_REQ from the \(from) (encryption start)"))
        case .startEncryptionRequest:
            links[i].encrypted = true
            links[i].encryptedFrom = [nil, nil]
            encryptionStarted(handle, frame, analyzer, &status)
            note(i, session, frame, .security, .air("LL_START_ENC_REQ: the link is encrypted from here"
                 + (p.radio.decrypted ? " (the sniffer decrypts it)" : "; payloads the sniffer did not decrypt are counted, not decoded")))
        case .pauseEncryptionResponse:
            links[i].encrypted = false
        case let .featureRequest(f), let .featureResponse(f), let .peripheralFeatureRequest(f):
            let name = LinkLayerDisplay.controlNames.name(UInt64(frame.payload[p.payloadOffset])) ?? "LL features"
            note(i, session, frame, .signaling, .air("\(name) from the \(from): features 0x\(Hex.pad(f, 16))"))
        case let .version(v, company, sub):
            note(i, session, frame, .signaling, .air("\(from) LL version 0x\(Hex.pad(v, 2)), company \(CompanyNames.table.name(UInt64(company)) ?? Hex.code(company, 4)), subversion 0x\(Hex.pad(sub, 4))"))
        case let .reject(reason):
            note(i, session, frame, .signaling, .air("\(from) rejected an LL procedure: \(HCIStatus(rawValue: reason).name)"))
        case let .rejectExtended(opcode, reason):
            note(i, session, frame, .signaling, .air("\(from) rejected an LL procedure: \(HCIStatus(rawValue: reason).name)"))
            // A PHY or data length update refused (Core v5.4 Vol 6 Part B 5.1.9, 5.1.10); collisions are retried.
            let procedure = FeatureRefusal.Procedure(opcode: opcode)
            if procedure == .phy || procedure == .dataLength, !LLProcedure.collisionStatuses.contains(reason) {
                session.featureRefused(handle: handle, .init(procedure: procedure, source: .rejected(byPeripheral: direction == .peripheralToCentral),
                                                             status: HCIStatus(rawValue: reason), frame: frame.number, time: frame.timestamp), frame: frame)
            }
        case let .unknownResponse(type):
            // The peer does not know the PDU: the feature it starts is not supported (Vol 6 Part B 2.4.2.8).
            session.featureRefused(handle: handle, .init(procedure: .init(opcode: type), source: .unknownResponse(byPeripheral: direction == .peripheralToCentral),
                                                         status: nil, frame: frame.number, time: frame.timestamp), frame: frame)
        case let .connectionParameterRequest(a, b, latency, timeout):
            note(i, session, frame, .parameters, .air("\(from) asks for interval \(Double(a) * 1.25)–\(Double(b) * 1.25) ms, latency \(latency), timeout \(Int(timeout) * 10) ms"))
        case let .lengthRequest(rx, _, tx, _), let .lengthResponse(rx, _, tx, _):
            let side = direction == .peripheralToCentral ? 1 : 0
            links[i].lengthRequest[side] = (rx, tx)
            if case .lengthResponse = pdu, let c = links[i].lengthRequest[0], let p = links[i].lengthRequest[1] {
                // Effective lengths seen from the central (Vol 6 Part B 4.5.10): what one side may send
                // is the smaller of its own maximum and what the other side can receive.
                let txOctets = min(c.tx, p.rx), rxOctets = min(p.tx, c.rx)
                dataLengthChanged(handle, tx: txOctets, rx: rxOctets, frame, analyzer, &status)
            }
        case let .phyUpdate(cToP, pToC, instant):
            let tx = Self.hciPHY(cToP) ?? links[i].phy.tx, rx = Self.hciPHY(pToC) ?? links[i].phy.rx
            links[i].phy = (tx, rx)
            phyUpdated(handle, tx: tx, rx: rx, frame, analyzer, &status)
            note(i, session, frame, .phy, .air("LL_PHY_UPDATE_IND at connection event \(instant)"))
        default:
            break
        }
    }

    /// LL PHY bit (1M 0x01, 2M 0x02, Coded 0x04; Vol 6 Part B 2.4.2, LL_PHY_UPDATE_IND) → HCI PHY (1, 2, 3);
    /// nil for "no change".
    static func hciPHY(_ bits: UInt8) -> UInt8? { bits & 1 != 0 ? 1 : bits & 2 != 0 ? 2 : bits & 4 != 0 ? 3 : nil }
}
