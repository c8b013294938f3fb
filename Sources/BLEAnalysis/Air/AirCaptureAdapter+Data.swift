import BLEBytes
import BLECapture
import BLEProtocol

/// Data channel PDUs (Core v5.4 Vol 6 Part B 2.4): CRC, direction, retransmissions, then LL Data PDUs
/// to the session's L2CAP reassembler and LL Control PDUs to `control`.
extension AirCaptureAdapter {
    func data(_ p: LLAirPacket, _ frame: Frame, _ analyzer: Analyzer, _ status: inout FrameStatus) {
        var index = live[p.accessAddress]
        if index == nil {
            // Mid-connection capture: no CONNECT_IND. Believe the address only when the capture checked
            // the CRC, or after a few sightings (a corrupted access address is noise).
            let seen = (sightings[p.accessAddress] ?? 0) + 1
            if p.radio.crc == .valid || seen >= Self.sightingsBeforeLink {
                index = openLink(p.accessAddress, frame)
                if let i = index {
                    note(i, analyzer.session, frame, .connected,
                         .air("access address 0x\(Hex.pad(p.accessAddress, 8)) seen with no CONNECT_IND in the capture (began mid-connection)"))
                }
            } else {
                if sightings.count < Self.maxSightings { sightings[p.accessAddress] = seen }
                strayPackets += 1
                return
            }
        }
        guard let i = index else { strayPackets += 1; return }
        syncLoss(i, analyzer.session, adapter: frame.adapter)
        links[i].packets += 1
        var crc = p.radio.crc
        if crc == .unchecked, let crcInit = links[i].crcInit { crc = p.computedCRC(frame.payload, crcInit: crcInit) }
        if crc == .invalid {
            links[i].crcErrors += 1
            links[i].lastLossFrame = frame.number
            lastContext.crc = .invalid
            return   // neither direction nor content can be trusted
        }
        let lossesBefore = links[i].losses
        let direction = links[i].direction(of: p, at: frame.timestamp)
        lastDirection = direction
        let undecodable = Self.undecodable(p, linkEncrypted: links[i].encrypted)
        lastContext = LinkLayerDisplay.Context(crc: crc, direction: direction, retransmission: false, encrypted: undecodable)
        if links[i].losses != lossesBefore { links[i].lastLossFrame = frame.number }
        links[i].noteSilence(p, direction, frame: frame.number, time: frame.timestamp)
        links[i].lastFrame = frame.number
        links[i].lastTime = frame.timestamp
        let side = direction == .peripheralToCentral ? 1 : 0
        // Retransmission (Vol 6 Part B 4.5.9): same SN and same bytes as the previous PDU from that side —
        // unless the peer acknowledged that PDU (its NESN moved past the SN) and this side is one that keeps
        // its SN whatever the acknowledgements (attack tools): then it is a new PDU with the same bytes.
        let bytes = Array(frame.payload[p.payloadOffset ..< p.payloadOffset + p.payloadLength])
        let acknowledged = links[i].lastSN[side].flatMap { sn in links[i].peerAck[side].map { $0 != sn } } ?? false
        if acknowledged, let sn = links[i].lastSN[side] {
            if sn == p.sn { links[i].snKeptAfterAck[side] += 1 } else { links[i].snToggles[side] += 1 }
        }
        links[i].peerAck[side] = nil
        links[i].peerAck[1 - side] = p.nesn
        if links[i].lastSN[side] == p.sn, links[i].lastBytes[side] == bytes, p.payloadLength > 0 || p.dataLLID != .continuation,
           !(acknowledged && links[i].ignoresSN(side)) {
            links[i].retransmissions += 1
            lastContext.retransmission = true
            if var r = links[i].run[side] {
                r.copies += 1
                (r.last, r.lastTime) = (frame.number, frame.timestamp)
                links[i].run[side] = r
            } else {
                let original = links[i].lastPDU[side]
                links[i].run[side] = AirRetransmissionBurst(byPeripheral: side == 1, copies: 1, first: original.frame, firstTime: original.time,
                                                            last: frame.number, lastTime: frame.timestamp)
            }
            if p.dataLLID == .start, let op = bytes.withReader({ L2CAP.attOpcode($0) }) {
                retransmittedATTOpcodes[Int(op.rawValue)] += 1
            }
            return
        }
        if links[i].run[side] != nil { closeBurst(i, side, analyzer.session, lost: false) }
        links[i].lastSN[side] = p.sn
        links[i].lastBytes[side] = bytes
        links[i].lastPDU[side] = (frame.number, frame.timestamp)
        if p.payloadLength == 0 {
            links[i].emptyPDUs += 1
            return
        }
        if links[i].encrypted { encryptedLinkPDU(i, side: side, p, frame, analyzer.session) }
        if undecodable {
            links[i].encryptedPDUs += 1
            if p.radio.mic == .invalid { links[i].micFailures += 1 }
            return
        }
        if links[i].encrypted { links[i].plainAfterEncryption += 1 }
        switch p.dataLLID {
        case .start, .continuation:
            links[i].dataPDUs += 1
            let start = p.dataLLID == .start
            followL2CAP(i, side: side, start: start, bytes, frame, analyzer.session)
            aclData(links[i].handle, start: start, bytes, at: frame.payloadOffset + p.payloadOffset,
                    sent: direction != .peripheralToCentral, frame, analyzer, &status)
        case .control:
            links[i].controlPDUs += 1
            var r = ByteReader(UnsafeRawBufferPointer(rebasing: frame.payload[p.payloadOffset ..< p.payloadOffset + p.payloadLength]),
                               base: frame.payloadOffset + p.payloadOffset)
            do {
                control(try LLControlPDU.decode(&r), p, i, direction, frame, analyzer, &status)
            } catch {
                status = .decode(error)
            }
        case .reserved:
            break
        }
    }

    /// A non-empty PDU on a link past LL_START_ENC_REQ. Every one is encrypted until LL_PAUSE_ENC (Core v5.4
    /// Vol 6 Part B 5.1.3.1). Each side's first PDU the header marks encrypted is its LL_START_ENC_RSP; once
    /// both sides sent one, a PDU the header marks as sent in the clear (Nordic flag 0x04 clear), or whose MIC
    /// failed while the sniffer decrypted others, goes to the detectors (`link.plain-after-encryption`). A
    /// sniffer that decrypts without saying so marks the LL_START_ENC_RSPs plain too, so it never gets here;
    /// headers that do not say (PHDR without the decrypted flag, 251) tell nothing.
    private func encryptedLinkPDU(_ i: Int, side: Int, _ p: LLAirPacket, _ frame: Frame, _ session: SessionModel) {
        let markedEncrypted = p.radio.encrypted == true || p.radio.decrypted || p.radio.mic != .unchecked
        let micFailed = p.radio.mic == .invalid && links[i].micChecked
        if p.radio.mic == .valid { links[i].micChecked = true }
        guard let central = links[i].encryptedFrom[0], let peripheral = links[i].encryptedFrom[1] else {
            if markedEncrypted, links[i].encryptedFrom[side] == nil { links[i].encryptedFrom[side] = frame.number }
            return
        }
        guard p.radio.encrypted == false || micFailed,
              let c = session.live[LinkKey(adapter: frame.adapter, handle: links[i].handle)] else { return }
        session.emit(.link, .airUnencryptedPDU(c, AirUnencryptedPDU(frame: frame.number, time: frame.timestamp, byPeripheral: side == 1,
                                                                    micFailed: micFailed, started: (central, peripheral))))
    }

    /// Whether a data PDU's payload is ciphertext we cannot read. The sniffer's header decides when it
    /// says: a MIC it checked and found bad (the decryption failed) is unreadable; a PDU it decrypted
    /// (PHDR flag 0x0008, or a good MIC) is plain; a Nordic header that says "not encrypted" on a link
    /// past LL_START_ENC_REQ is believed (the sniffer decrypted it without saying so, or the link never
    /// encrypted). Otherwise a PDU is ciphertext once the link encrypted.
    static func undecodable(_ p: LLAirPacket, linkEncrypted: Bool) -> Bool {
        if p.radio.mic == .invalid { return p.payloadLength > 0 }
        if p.radio.decrypted || p.radio.mic == .valid { return false }
        if let stated = p.radio.encrypted { return stated && p.payloadLength > 0 }
        return linkEncrypted && p.payloadLength > 0
    }

    /// Watches L2CAP reassembly per side, before the fragment goes to the session's reassembler, to see
    /// what the sniffer lost. A lost response (a response whose continuation never came, or a request
    /// answered by nothing before the same client's next request, after the sniffer missed packets)
    /// would leave its request outstanding and make every later request look like an ATT protocol
    /// violation: such a transaction is closed as "answered, response not captured", with a timeline
    /// note. With no loss in between, a second request is left alone: that is a real violation.
    private func followL2CAP(_ i: Int, side: Int, start: Bool, _ bytes: [UInt8], _ frame: Frame, _ session: SessionModel) {
        guard start else { return }
        let handle = links[i].handle
        if let pending = partial(handle, side: side, frame, session) {
            links[i].lastLossFrame = frame.number
            if let op = startedATT(i, side: side, pending), ATTOpcode(op).kind == .response {
                closeLostTransaction(i, requester: side == 0 ? .peer : .host, frame, session,
                                     why: "the sniffer lost part of the \(ATTOpcode(op).name) started in frame \(pending.firstFrame) "
                                        + "(\(pending.have) of \(pending.expected) bytes)")
            }
        }
        links[i].startedATT[side] = nil
        guard let op = bytes.withReader({ L2CAP.attOpcode($0)?.rawValue }) else { return }
        links[i].startedATT[side] = (frame.number, op)
        guard ATTOpcode(op).kind == .request else { return }
        // A new request while this client's previous one is unanswered, after a loss: the response was lost.
        let requester: ATTBearer.Side = side == 0 ? .host : .peer
        let server = 1 - side
        if let pending = partial(handle, side: server, frame, session), let answer = startedATT(i, side: server, pending),
           ATTOpcode(answer).kind == .response {
            // The server's answer is still incomplete and the client moves on: its end was lost.
            links[i].startedATT[server] = nil
            links[i].lastLossFrame = frame.number
            closeLostTransaction(i, requester: requester, frame, session,
                                 why: "the sniffer lost part of the \(ATTOpcode(answer).name) started in frame \(pending.firstFrame) "
                                    + "(\(pending.have) of \(pending.expected) bytes)")
        }
        if let c = session.live[LinkKey(adapter: frame.adapter, handle: handle)],
           let outstanding = c.att.outstanding(from: requester), outstanding.frame < links[i].lastLossFrame {
            closeLostTransaction(i, requester: requester, frame, session,
                                 why: "no response to the \(outstanding.opcode.name) of frame \(outstanding.frame) was captured and the sniffer missed packets since")
        }
    }

    /// The L2CAP PDU still incomplete on one side of the link, as the session's reassembler holds it.
    private func partial(_ handle: UInt16, side: Int, _ frame: Frame, _ session: SessionModel) -> L2CAPReassembler.Progress? {
        session.reassembler.inProgress(L2CAPReassembler.Key(adapter: frame.adapter, handle: handle, received: side == 1))
    }

    /// The ATT opcode of the partial PDU, when its start fragment carried one.
    private func startedATT(_ i: Int, side: Int, _ pending: L2CAPReassembler.Progress) -> UInt8? {
        guard let started = links[i].startedATT[side], started.frame == pending.firstFrame else { return nil }
        return started.opcode
    }

    private func closeLostTransaction(_ i: Int, requester: ATTBearer.Side, _ frame: Frame, _ session: SessionModel, why: String) {
        guard let c = session.live[LinkKey(adapter: frame.adapter, handle: links[i].handle)], c.att.take(requester: requester) != nil else { return }
        links[i].lostResponses += 1
        if links[i].lostResponses <= 20 { c.note(frame.timestamp, frame.number, .attError, .air(why + ": taken as answered")) }
    }
}
