import BLEBytes
import BLECapture
import BLEProtocol

/// The LE signalling channel (CID 0x0005) and credit-based channels on dynamic CIDs.
extension SessionModel {
    func leSignaling(_ payload: inout ByteReader, _ c: Connection, frame: Frame, sent: Bool, status: inout FrameStatus) {
        let packet: L2CAP.SignalingPacket
        do { packet = try L2CAP.decodeSignaling(&payload) } catch {
            if status == .ok { status = .decode(error) }
            return
        }
        let who = sent ? "host" : "peer"
        switch packet.command {
        case let .connectionParameterUpdateRequest(p):
            emit(.link, .parameterRequest(c, frame: frame.number, time: frame.timestamp, sent: sent))
            c.note(frame.timestamp, frame.number, .signaling,
                   "\(who) asked for connection parameters: interval \(Self.ms(p.intervalMinUnits))–\(Self.ms(p.intervalMaxUnits)) ms, latency \(p.latency), timeout \(Int(p.timeoutUnits) * 10) ms")
        case let .connectionParameterUpdateResponse(result):
            emit(.link, .parameterResponse(c, frame: frame.number, time: frame.timestamp, sent: sent, accepted: result == 0))
            if result != 0 { c.note(frame.timestamp, frame.number, .signaling, "connection parameter update rejected by \(who)") }
        case let .leCreditBasedConnectionRequest(r):
            c.creditChannels.request(packet.identifier, spsm: r.spsm, sourceCIDs: [r.sourceCID], mtu: r.mtu, credits: r.initialCredits, sent: sent)
        case let .creditBasedConnectionRequest(r):
            c.creditChannels.request(packet.identifier, spsm: r.spsm, sourceCIDs: r.sourceCIDs, mtu: r.mtu, credits: r.initialCredits, sent: sent)
        case let .leCreditBasedConnectionResponse(r):
            opened(c, c.creditChannels.response(packet.identifier, destinationCIDs: [r.destinationCID], mtu: r.mtu,
                                                credits: r.initialCredits, result: r.result, frame: frame.number), frame: frame, result: r.result)
        case let .creditBasedConnectionResponse(r):
            opened(c, c.creditChannels.response(packet.identifier, destinationCIDs: r.destinationCIDs, mtu: r.mtu,
                                                credits: r.initialCredits, result: r.result, frame: frame.number), frame: frame, result: r.result)
        case let .flowControlCreditIndication(cid, credits):
            c.creditChannels.credits(cid: cid, credits: credits, sentByHost: sent)
        case let .disconnectionRequest(destination, _):
            c.creditChannels.close(cid: destination, frame: frame.number)
            c.note(frame.timestamp, frame.number, .signaling, "\(who) closed L2CAP channel 0x\(Hex.pad(destination, 4))")
        default:
            break
        }
    }

    private func opened(_ c: Connection, _ channels: [CreditChannels.Channel], frame: Frame, result: UInt16) {
        if channels.isEmpty, result != 0 {
            c.note(frame.timestamp, frame.number, .signaling, "credit-based channel refused (result 0x\(Hex.pad(result, 4)))")
        }
        for ch in channels {
            c.note(frame.timestamp, frame.number, .signaling,
                   "credit-based channel open: SPSM 0x\(Hex.pad(ch.spsm, 4)), host CID 0x\(Hex.pad(ch.hostCID, 4)) / peer CID 0x\(Hex.pad(ch.peerCID, 4)), MTU \(ch.hostMTU)/\(ch.peerMTU), credits \(ch.hostCredits)/\(ch.peerCredits)")
        }
    }

    /// A K-frame on a dynamic CID.
    func dynamicChannel(_ payload: ByteReader, cid: UInt16, _ c: Connection, sent: Bool) {
        _ = c.creditChannels.kFrame(cid: cid, sent: sent, payload: payload)
    }
}
