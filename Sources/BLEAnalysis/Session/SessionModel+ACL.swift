import BLEBytes
import BLECapture
import BLEProtocol

/// ACL data (Core v5.4 Vol 4 Part E 5.4.2): flow control per packet, capture cuts, L2CAP
/// reassembly, and each complete PDU dispatched by channel to ATT, SMP and signalling.
extension SessionModel {
    // MARK: ACL

    func acl(_ frame: Frame, status: inout FrameStatus) {
        var r = ByteReader(frame.payload, base: frame.payloadOffset)
        guard let word = try? r.u16le("Handle"), let dlen = try? r.u16le("Length") else { return }
        let header = ACLHeader(word: word, length: dlen)
        // Connection handles are 0x0000–0x0EFF (Core v5.4 Vol 4 Part E 5.4.2); controllers put debug
        // logs on reserved ones (Qualcomm 0x2EDC, QCA_DEBUG_HANDLE in Linux's hci_qca.c): not a link.
        guard header.handle <= 0x0EFF, header.handle != Self.qualcommDebugHandle else { return }
        guard let found = connection(for: frame, handle: header.handle) else { return }
        let sent = frame.direction != .received
        // A `let`: the reassembler's closure below captures it, and a captured `var` is boxed per packet.
        let c = found.lifecycle.inferred && header.isStart ? newSessionIfReused(found, r, frame: frame, handle: header.handle, sent: sent) : found
        if sent {
            c.traffic.aclSent += 1
            c.traffic.bytesSent += Int(dlen)
            c.traffic.lastSentFrame = frame.number
            c.traffic.lastSentTime = frame.timestamp
            let before = flow.inUse(isLE: c.isLE)
            flow.sent(c)
            if recordsActivity {
                c.activity.capacity = flow.capacity(isLE: c.isLE)
                activityLink = c
                c.activity.record(frame.timestamp) { b in
                    b.aclSent += 1
                    b.bytesSent += Int(dlen)
                    b.maxBuffersInUse = max(b.maxBuffersInUse, before + 1)
                }
            }
            c.buffers.unacknowledged.append(SentPacket(frame: frame.number, time: frame.timestamp))
            emit(.aclSent, .aclSent(c, frame: frame.number, time: frame.timestamp, inUseBefore: before, capacity: flow.capacity(isLE: c.isLE)))
        } else {
            signOfLife(c, .received, frame: frame)
            c.traffic.aclReceived += 1
            c.traffic.bytesReceived += Int(dlen)
            c.traffic.previousReceivedTime = c.traffic.lastReceivedTime
            c.traffic.lastReceivedFrame = frame.number
            c.traffic.lastReceivedTime = frame.timestamp
            if recordsActivity {
                activityLink = c
                c.activity.record(frame.timestamp) { b in
                    b.aclReceived += 1
                    b.bytesReceived += Int(dlen)
                }
            }
            emit(.aclReceived, .aclReceived(c, frame: frame.number, time: frame.timestamp))
        }
        if c.traffic.firstDataTime == nil { c.traffic.firstDataTime = frame.timestamp }
        c.traffic.lastDataTime = frame.timestamp
        let linkKey = L2CAPReassembler.Key(adapter: frame.adapter, handle: header.handle, received: !sent)
        if frame.isCaptureTruncated {
            // Cut by the capture: upper layers are not decodable. Its continuation fragments (btsnooz keeps
            // 14 bytes of each fragment, so short ones arrive whole) belong to a cut PDU: not orphans.
            if header.isStart {
                reassembler.reset(adapter: frame.adapter, handle: header.handle)
                cutPDUs.insert(linkKey)
            }
            // An ATT start fragment is noted for the MTU rules.
            if header.isStart, let opcode = L2CAP.attOpcode(r) {
                attOpcodes[Int(opcode.rawValue)] &+= 1
                let handle = opcode != .errorResponse ? ATT.peekHandle(r, opcodeAt: L2CAP.basicHeaderLength) : nil
                attTruncated(opcode, handle: handle, c, frame: frame, sent: sent)
                emit(.mtu, .captureTruncatedATT(c, frame: frame.number, time: frame.timestamp))
            }
            return
        }
        if header.isStart {
            if !cutPDUs.isEmpty { cutPDUs.remove(linkKey) }
        } else if !cutPDUs.isEmpty, cutPDUs.contains(linkKey) {
            return   // the rest of a PDU the capture cut
        }
        let data = r.rest()
        var body = data
        if header.isStart, let l2cap = try? L2CAP.BasicHeader.read(&body) {
            let expected = 4 + Int(l2cap.length)
            // More than its L2CAP length announces: the PDU delivered is cut to that length, and a
            // request in it is malformed (a lying length).
            if data.remaining > expected { malformedATT = true }
            // Less: an ATT PDU in progress (fragmented, or a length that lies the other way).
            let opcode = l2cap.channel == .att && data.remaining < expected ? body.peekU8() : nil
            let partial = opcode.map { ($0, frame.number) }
            // Written only when it changes (most start fragments hold a whole PDU).
            if sent {
                if partial != nil || c.att.partialSent != nil { c.att.partialSent = partial }
            } else if partial != nil || c.att.partialReceived != nil {
                c.att.partialReceived = partial
            }
        }
        defer { malformedATT = false }
        let problem = reassembler.push(linkKey, isStart: header.isStart, data: data, frame: frame.number) { pdu, origin in
            self.l2cap(&pdu, c, frame: frame, sent: sent, origin: origin, status: &status)
        }
        if let problem, status == .ok {
            if case .orphanContinuation = problem, c.lifecycle.inferred, c.traffic.aclSent + c.traffic.aclReceived <= 2 {
                return   // the capture began in the middle of a PDU: not the stack's fault
            }
            status = .malformed(reason: problem.description, offset: frame.payloadOffset)
            c.att.noteUndecoded(frame.number, sent: sent)
        }
    }

    /// A link with no set-up in the capture (an ACL-only export has none at all) reused by a new
    /// session: no Connection Complete will say so, the ATT traffic does. A client sends Exchange MTU
    /// once per connection (Core v5.4 Vol 3 Part F 3.4.2.1), so a second one from it starts a new
    /// connection; so does a primary service discovery from 0x0001 after one was done and the link
    /// was silent ≥ `sessionGap`. The old connection ends at its last data.
    func newSessionIfReused(_ c: Connection, _ r: ByteReader, frame: Frame, handle: UInt16, sent: Bool) -> Connection {
        var pdu = r
        guard let header = try? L2CAP.BasicHeader.read(&pdu), header.channel == .att,
              let op = pdu.peekU8(), op == ATTOpcode.exchangeMTURequest.rawValue || op == ATTOpcode.readByGroupTypeRequest.rawValue,
              let att = try? ATT.decode(&pdu) else { return c }
        let why: String
        if case .exchangeMTURequest = att, (sent ? c.att.mtuRequestsByHost : c.att.mtuRequestsByPeer) > 0 {
            why = "a second Exchange MTU Request from the same client"
        } else if case let .readByGroupTypeRequest(range, type) = att, range.start == 0x0001, type == .primaryService,
                  c.att.discoveryRequests > 0, let last = c.traffic.lastDataTime, frame.timestamp - last >= Self.sessionGap {
            why = "a new primary service discovery from 0x0001 after \(Format.duration(frame.timestamp - last)) of silence"
        } else {
            return c
        }
        guard connections.count < Self.maxConnections else { return c }
        c.lifecycle.disconnectFrame = frame.number
        c.lifecycle.disconnectTime = c.traffic.lastDataTime ?? frame.timestamp
        c.note(c.lifecycle.disconnectTime ?? frame.timestamp, frame.number, .disconnected, .sessionEnds(handle: handle, why: why))
        emit(.connection, .disconnected(c, unacknowledged: []))
        _ = flow.dropLink(c)
        c.linkEnded()
        let key = LinkKey(adapter: frame.adapter, handle: handle)
        live[key] = nil
        if key.adapter == 0, key.handle < 0x1000 { adapter0[Int(key.handle)] = nil }
        reassembler.reset(adapter: frame.adapter, handle: handle)
        let n = newConnection(adapter: frame.adapter, handle: handle)
        n.lifecycle.inferred = true
        n.att.mtuKnown = false
        n.note(frame.timestamp, frame.number, .connected, .sessionBegins(handle: handle, why: why))
        open(n, frame: frame)
        return n
    }

    /// Silence after which a rediscovery from 0x0001 on a link with no set-up is a new session.
    static let sessionGap: Int64 = 60_000_000

    func l2cap(_ pdu: inout ByteReader, _ c: Connection, frame: Frame, sent: Bool,
                       origin: L2CAPReassembler.Origin, status: inout FrameStatus) {
        if origin.map.isFragmented { currentFragmentMap = origin.map }
        if sent { if c.att.partialSent != nil { c.att.partialSent = nil } } else if c.att.partialReceived != nil { c.att.partialReceived = nil }
        defer { if currentFragmentMap != nil { currentFragmentMap = nil } }
        if let body = pduBody {
            body(CompletedPDU(connection: c, received: !sent, bytes: pdu, map: origin.map, firstFrame: origin.firstFrame))
        }
        currentPDU = (pdu.remainingBytes, pdu.absoluteOffset, pdu.remaining)
        defer { currentPDU = nil }
        guard let length = try? pdu.u16le("Length"), let cid = try? pdu.u16le("Channel ID") else { return }
        var payload = pdu.rest()
        let lyingLength = Int(length) != payload.remaining
        if lyingLength, status == .ok {
            status = .decode(pduError(DecodeError(kind: .lengthMismatch(declared: Int(length), actual: payload.remaining),
                                                  offset: payload.base, field: "L2CAP Length")))
        }
        switch cid {
        case L2CAP.ChannelID.att.rawValue:
            if let op = payload.peekU8() { attOpcodes[Int(op)] &+= 1 }
            if payload.remaining > c.att.largestPDU {
                c.att.largestPDU = payload.remaining
                if !c.att.mtuKnown { c.att.mtu = max(c.att.mtu, payload.remaining) }
            }
            let start = payload
            do {
                let att = try ATT.decode(&payload)
                let wasMalformed = malformedATT
                if lyingLength { malformedATT = true }
                self.att(att, c, frame: frame, sent: sent, pduFrame: origin.firstFrame)
                malformedATT = wasMalformed
            } catch {
                if status == .ok { status = .decode(pduError(error)) }
                // Its opcode still tells a request (to pair its response) from a response (ending a
                // transaction); its values are not decodable.
                if let op = start.peekU8() {
                    attUndecodable(ATTOpcode(op), c, frame: frame, sent: sent)
                } else {
                    c.att.noteUndecoded(frame.number, sent: sent)
                }
            }
        case L2CAP.ChannelID.leSignaling.rawValue:
            leSignaling(&payload, c, frame: frame, sent: sent, status: &status)
        case 0x0001 where !c.isLE:
            brEDRSignaling(&payload, c, frame: frame, sent: sent, status: &status)
        case 0x0040...0xFFFF where !c.isLE || cid <= 0x007F:
            dynamicChannel(payload, cid: cid, c, frame: frame, sent: sent, status: &status)
        case L2CAP.ChannelID.smp.rawValue:
            do {
                let cmd = try SMP.decode(&payload)
                smp(cmd, c, frame: frame, sent: sent)
            } catch {
                if status == .ok { status = .decode(pduError(error)) }
            }
        default:
            break
        }
    }

    /// `error`, from a decoder reading the L2CAP PDU being decoded, with its offset a file offset.
    func pduError(_ error: DecodeError) -> DecodeError {
        currentFragmentMap?.fileError(error) ?? error
    }
}
