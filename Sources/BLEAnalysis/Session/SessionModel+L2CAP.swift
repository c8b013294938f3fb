import BLEBytes
import BLECapture
import BLEProtocol

/// The LE signalling channel (CID 0x0005) and credit-based channels on dynamic CIDs.
extension SessionModel {
    func leSignaling(_ payload: inout ByteReader, _ c: Connection, frame: Frame, sent: Bool, status: inout FrameStatus) {
        let packet: L2CAP.SignalingPacket
        do { packet = try L2CAP.decodeSignaling(&payload) } catch {
            if status == .ok { status = .decode(pduError(error)) }
            return
        }
        let who = sent ? "host" : "peer"
        switch packet.command {
        case let .connectionParameterUpdateRequest(p):
            if !sent {
                c.forensics.peerParameterRequest = .init(frame: frame.number, time: frame.timestamp)
                c.forensics.requestedTimeoutUnits = p.timeoutUnits
            }
            emit(.link, .parameterRequest(c, frame: frame.number, time: frame.timestamp, sent: sent))
            c.note(frame.timestamp, frame.number, .signaling,
                   .parametersRequested(byHost: sent, intervalMin: p.intervalMinUnits, intervalMax: p.intervalMaxUnits, latency: p.latency, timeout: p.timeoutUnits))
        case let .connectionParameterUpdateResponse(result):
            emit(.link, .parameterResponse(c, frame: frame.number, time: frame.timestamp, sent: sent, accepted: result == 0))
            if result != 0 { c.note(frame.timestamp, frame.number, .signaling, .parameterUpdateRejected(byHost: sent)) }
        case let .leCreditBasedConnectionRequest(r):
            c.creditChannels.request(packet.identifier, spsm: r.spsm, sourceCIDs: [r.sourceCID], mtu: r.mtu, credits: r.initialCredits, sent: sent)
        case let .creditBasedConnectionRequest(r):
            c.creditChannels.request(packet.identifier, spsm: r.spsm, sourceCIDs: r.sourceCIDs, mtu: r.mtu, credits: r.initialCredits, sent: sent)
        case let .leCreditBasedConnectionResponse(r):
            let spsm = c.creditChannels.pending[packet.identifier]?.spsm
            opened(c, c.creditChannels.response(packet.identifier, destinationCIDs: [r.destinationCID], mtu: r.mtu,
                                                credits: r.initialCredits, result: r.result, frame: frame.number),
                   frame: frame, result: r.result, spsm: spsm, enhanced: false, sent: sent)
        case let .creditBasedConnectionResponse(r):
            enhancedResponse(c, r, identifier: packet.identifier, frame: frame, sent: sent)
        case let .flowControlCreditIndication(cid, credits):
            c.creditChannels.credits(cid: cid, credits: credits, sentByHost: sent, frame: frame.number, time: frame.timestamp)
        case let .commandReject(reason, _):
            rejected(c, reason, frame: frame, sent: sent)
        case let .disconnectionRequest(destination, source):
            c.channelBearers[sent ? source : destination] = nil
            c.creditChannels.close(cid: destination, frame: frame.number)
            c.note(frame.timestamp, frame.number, .signaling, .channelClosed(byHost: sent, cid: destination))
        default:
            break
        }
    }

    private func opened(_ c: Connection, _ channels: [CreditChannels.Channel], frame: Frame, result: UInt16, spsm: UInt16?,
                        enhanced: Bool, sent: Bool) {
        // Results 0x000D–0x000F of a Credit Based Connection Response are "pending" (Core v5.4 Vol 3 Part A 4.26).
        if channels.isEmpty, result != 0, !(enhanced && (0x000D ... 0x000F).contains(result)) {
            c.note(frame.timestamp, frame.number, .signaling, .creditChannelRefused(result: result))
            emit(.link, .signalingRefused(c, .init(kind: .channel(spsm: spsm, result: result, enhanced: enhanced), frame: frame.number,
                                                   time: frame.timestamp, byHost: sent)))
        }
        for ch in channels {
            c.note(frame.timestamp, frame.number, .signaling,
                   .creditChannelOpen(spsm: ch.spsm, hostCID: ch.hostCID, peerCID: ch.peerCID, hostMTU: ch.hostMTU, peerMTU: ch.peerMTU,
                                      hostCredits: Int(ch.hostCredits), peerCredits: Int(ch.peerCredits)))
        }
    }

    /// The BR/EDR signalling channel (CID 0x0001, Core v5.4 Vol 3 Part A 4): one C-frame may carry
    /// several commands. Tracked: channels for ATT (PSM 0x001F) and credit-based channels (EATT).
    func brEDRSignaling(_ payload: inout ByteReader, _ c: Connection, frame: Frame, sent: Bool, status: inout FrameStatus) {
        while payload.remaining >= 4 {
            let packet: L2CAP.SignalingPacket
            do { packet = try L2CAP.decodeSignaling(&payload) } catch {
                if status == .ok { status = .decode(pduError(error)) }
                return
            }
            switch packet.command {
            case let .connectionRequest(psm, source):
                if c.pendingChannels.count < 64 { c.pendingChannels[packet.identifier] = (psm, source, sent) }
            case let .connectionResponse(destination, source, result, _):
                // Result 0x0001 is "pending": a final response follows.
                guard result != 1, let req = c.pendingChannels.removeValue(forKey: packet.identifier) else { continue }
                guard result == 0, req.psm == L2CAP.psmATT, c.channelBearers.count < 16 else { continue }
                _ = source
                // The requester receives on its source CID, the responder on the destination CID.
                let hostCID = req.requesterIsHost ? req.sourceCID : destination
                let peerCID = req.requesterIsHost ? destination : req.sourceCID
                var bearer = ChannelBearer(kind: .brEDR, hostCID: hostCID, peerCID: peerCID)
                // ATT_MTU over BR/EDR is the L2CAP MTU from configuration, not read here: unknown.
                bearer.att.mtuKnown = false
                c.channelBearers[hostCID] = bearer
                c.note(frame.timestamp, frame.number, .signaling, .attOverBREDROpen(hostCID: hostCID, peerCID: peerCID))
            case let .creditBasedConnectionRequest(r):
                c.creditChannels.request(packet.identifier, spsm: r.spsm, sourceCIDs: r.sourceCIDs, mtu: r.mtu, credits: r.initialCredits, sent: sent)
            case let .creditBasedConnectionResponse(r):
                enhancedResponse(c, r, identifier: packet.identifier, frame: frame, sent: sent)
            case let .commandReject(reason, _):
                rejected(c, reason, frame: frame, sent: sent)
            case let .disconnectionRequest(destination, source):
                c.channelBearers[sent ? source : destination] = nil
                c.creditChannels.close(cid: destination, frame: frame.number)
            default:
                break
            }
        }
    }

    /// Credit-based channels on SPSM 0x0027 are Enhanced ATT bearers (Core v5.4 Vol 3 Part G 5.4);
    /// their ATT_MTU is the smaller L2CAP MTU (Vol 3 Part F 3.2.8).
    /// An (enhanced) Credit Based Connection Response, on the LE or the BR/EDR signalling channel
    /// (Core v5.4 Vol 3 Part A 4.26): the channels it opens, their EATT bearers, the refusal if any.
    private func enhancedResponse(_ c: Connection, _ r: L2CAP.CreditBasedConnectionResponse, identifier: UInt8,
                                  frame: Frame, sent: Bool) {
        let spsm = c.creditChannels.pending[identifier]?.spsm
        let channels = c.creditChannels.response(identifier, destinationCIDs: r.destinationCIDs, mtu: r.mtu,
                                                 credits: r.initialCredits, result: r.result, frame: frame.number)
        enhancedBearers(c, channels)
        opened(c, channels, frame: frame, result: r.result, spsm: spsm, enhanced: true, sent: sent)
    }

    func enhancedBearers(_ c: Connection, _ opened: [CreditChannels.Channel]) {
        for ch in opened where ch.spsm == L2CAP.spsmEATT && c.channelBearers.count < 16 {
            var bearer = ChannelBearer(kind: .enhanced, hostCID: ch.hostCID, peerCID: ch.peerCID)
            bearer.att.mtu = Int(min(ch.hostMTU, ch.peerMTU))
            c.channelBearers[ch.hostCID] = bearer
        }
    }

    /// A frame on a dynamic CID: an ATT bearer's PDU, or a K-frame of a credit-based channel.
    func dynamicChannel(_ payload: ByteReader, cid: UInt16, _ c: Connection, frame: Frame, sent: Bool, status: inout FrameStatus) {
        if !c.channelBearers.isEmpty, let key = bearerKey(c, cid: cid, sent: sent), let kind = c.channelBearers[key]?.kind {
            var r = payload
            if kind == .enhanced {
                // K-frame: an SDU of one frame is one ATT PDU after its 2-byte SDU length; a segmented SDU's
                // first frame is counted by its opcode (as tshark shows it once) but not decoded.
                let starts = c.creditChannels.startsSDU(cid: cid, sent: sent) ?? true
                if let wait = c.creditChannels.kFrame(cid: cid, sent: sent, payload: payload, frame: frame.number, time: frame.timestamp) {
                    emit(.link, .creditWait(c, wait))
                }
                guard starts, let sduLength = try? r.u16le("L2CAP SDU Length") else { return }
                if let op = r.peekU8() { attOpcodes[Int(op)] &+= 1 }
                guard Int(sduLength) == r.remaining else { return }
            } else if let op = r.peekU8() {
                attOpcodes[Int(op)] &+= 1
            }
            channelATT(&r, c, key: key, frame: frame, sent: sent, status: &status)
            return
        }
        if let wait = c.creditChannels.kFrame(cid: cid, sent: sent, payload: payload, frame: frame.number, time: frame.timestamp) {
            emit(.link, .creditWait(c, wait))
        }
    }

    /// A Command Reject (Core v5.4 Vol 3 Part A 4.1): the other side did not understand or accept a command.
    private func rejected(_ c: Connection, _ reason: UInt16, frame: Frame, sent: Bool) {
        emit(.link, .signalingRefused(c, .init(kind: .commandReject(reason: reason), frame: frame.number, time: frame.timestamp, byHost: sent)))
    }

    /// The bearer a frame belongs to: data sent by the host goes to the peer's CID.
    private func bearerKey(_ c: Connection, cid: UInt16, sent: Bool) -> UInt16? {
        if !sent { return c.channelBearers[cid] != nil ? cid : nil }
        return c.channelBearers.first { $0.value.peerCID == cid }?.key
    }

    /// Decodes an ATT PDU of a channel bearer with that bearer's own state in place of the fixed
    /// channel's (swapped in and out: channel bearers are rare, the fixed one is the hot path).
    private func channelATT(_ r: inout ByteReader, _ c: Connection, key: UInt16, frame: Frame, sent: Bool, status: inout FrameStatus) {
        guard var bearer = c.channelBearers[key] else { return }
        let fixed = c.att
        c.att = bearer.att
        defer {
            bearer.att = c.att
            c.channelBearers[key] = bearer
            c.att = fixed
        }
        if r.remaining > c.att.largestPDU {
            c.att.largestPDU = r.remaining
            if !c.att.mtuKnown { c.att.mtu = max(c.att.mtu, r.remaining) }
        }
        do {
            let pdu = try ATT.decode(&r)
            att(pdu, c, frame: frame, sent: sent, pduFrame: frame.number)
        } catch {
            if status == .ok { status = .decode(pduError(error)) }
        }
    }
}

/// An L2CAP signalling refusal (`l2cap.channel-refused`, `l2cap.command-reject`).
public struct SignalingRefusal: Sendable {
    public enum Kind: Sendable {
        /// LE Credit Based (4.23) or Credit Based (`enhanced`, 4.26) Connection Response refusing every channel;
        /// `spsm` from the request when the capture holds it.
        case channel(spsm: UInt16?, result: UInt16, enhanced: Bool)
        /// Command Reject (4.1) with its reason.
        case commandReject(reason: UInt16)
    }
    public var kind: Kind
    public var frame: Int
    public var time: Int64
    /// The host sent the refusal (the peer had asked).
    public var byHost: Bool
}
