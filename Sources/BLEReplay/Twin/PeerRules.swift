import BLEBytes
import BLEProtocol

/// How a twin answers what the story does not have ahead (a central that asks in another order,
/// at another MTU, or something the recording never shows). Each rule is stated in the divergence
/// it reports; answers that come from recorded facts (the attribute table, a value or an error
/// recorded for that handle, the recorded MTU) are not divergences.
///
/// | request | answer |
/// |---|---|
/// | discovery (Find Information, Find By Type Value, Read By Type of 0x2802/0x2803, Read By Group Type) | from the attribute table at the live MTU |
/// | Exchange MTU | the recorded server MTU (23 when none was recorded: a divergence) |
/// | Read, Read Blob, Read By Type of a value | the error the device recorded for that handle, else the latest value recorded by then; never recorded: an empty value (divergence) |
/// | Write Request, Prepare/Execute Write | the recorded answer for that handle, else Write Response / echo (divergence when the handle was never written) |
/// | a handle not in the table | Invalid Handle (divergence) |
/// | any other request | Request Not Supported (divergence) |
/// | SMP | a live pairing (legacy Just Works, Secure Connections Just Works / Numeric Comparison) when the device paired in the recording; otherwise the device's recorded Pairing Failed, else Pairing Failed (Pairing Not Supported), saying why |
/// | other channels | nothing; a signalling request gets Command Reject (divergence) |
extension PeerEngine {
    func answerByRule(channel: UInt16, payload: [UInt8], pdu: [UInt8]) throws(TransportError) {
        switch channel {
        case L2CAP.ChannelID.att.rawValue: att(payload, pdu: pdu)
        case L2CAP.ChannelID.smp.rawValue: smp(payload, pdu: pdu)
        case L2CAP.ChannelID.leSignaling.rawValue:
            // Requests have even codes, responses odd; Command Reject (0x01) is never answered (Vol 3 Part A 4).
            let packet: L2CAP.SignalingPacket? = payload.withUnsafeBytes { raw in
                var r = ByteReader(raw)
                return try? L2CAP.decodeSignaling(&r)
            }
            guard let packet, packet.code.rawValue & 1 == 0 else { return }
            diverge(pdu, "answered with Command Reject (not understood)")
            // Command Reject (4.1): code 0x01, the request's identifier, length 2, reason 0x0000 Command not understood.
            send(channel, [L2CAP.SignalingCode.commandReject.rawValue, packet.identifier, 0x02, 0x00, 0x00, 0x00])
        default:
            diverge(pdu, "ignored (channel 0x\(Hex.pad(channel, 4)))")
        }
    }

    private func att(_ p: [UInt8], pdu: [UInt8]) {
        guard let first = p.first else { return }
        let op = ATTOpcode(first)
        let decoded = TwinPDU.att(p)
        // The Attribute Handle In Error (Core v5.4 Vol 3 Part F 3.4.1.1): the request's handle, or
        // its starting handle.
        let handle: UInt16
        switch decoded {
        case let .readRequest(h)?, let .readBlobRequest(h, _)?, let .writeRequest(h, _)?, let .prepareWriteRequest(h, _, _)?: handle = h
        case let .findInformationRequest(range)?, let .readByTypeRequest(range, _)?, let .readByGroupTypeRequest(range, _)?: handle = range.start
        case let .findByTypeValueRequest(request)?: handle = request.range.start
        default: handle = 0
        }
        let story = twin.story
        let at = max(position, 0)
        switch op {
        case .exchangeMTURequest:
            if story.serverMTU == nil { diverge(pdu, "the recording has no MTU exchange; answered with the default MTU 23") }
            reply(ATTEncoding.exchangeMTUResponse(serverMTU: story.serverMTU ?? UInt16(ATT.defaultLEMTU)))
        case _ where twin.table.discovery(p[...], mtu: liveMTU) != nil:   // discovery: from the table
            reply(twin.table.discovery(p[...], mtu: liveMTU) ?? [])
        case .readRequest, .readBlobRequest:
            var offset = 0
            if case let .readBlobRequest(_, o)? = decoded { offset = Int(o) }
            // 3.4.4.3 / 3.4.4.5: a handle the server does not have is Invalid Handle.
            guard twin.table.attribute(handle) != nil || story.value(of: handle, at: at) != nil else {
                diverge(pdu, "handle 0x\(Hex.pad(handle, 4)) is not in the recorded database: answered Invalid Handle")
                reply(ATTEncoding.errorResponse(request: op, handle: handle, .invalidHandle)); return
            }
            if let error = story.recordedError(request: .readRequest, handle: handle, at: at) { reply(error); return }
            var value = story.value(of: handle, at: at)
            if value == nil {
                diverge(pdu, "handle 0x\(Hex.pad(handle, 4)) was never read in the recording: answered with an empty value")
                value = []
            }
            let v = value ?? []
            guard offset <= v.count else { reply(ATTEncoding.errorResponse(request: op, handle: handle, .invalidOffset)); return }
            reply(ATTEncoding.readResponse(v[offset...].prefix(liveMTU - 1), blob: op == .readBlobRequest))
        case .readByTypeRequest:
            guard case let .readByTypeRequest(range, type)? = decoded else {
                reply(ATTEncoding.errorResponse(request: op, handle: handle, .invalidPDU)); return
            }
            // 3.4.4.1: nothing of that type in range is Attribute Not Found.
            guard let found = twin.table.attributes.first(where: { $0.handle >= range.start && $0.handle <= range.end && $0.type == type }) else {
                reply(ATTEncoding.errorResponse(request: op, handle: handle, .attributeNotFound)); return
            }
            if let error = story.recordedError(request: .readRequest, handle: found.handle, at: at) { reply(error); return }
            let value = story.value(of: found.handle, at: at)
            if value == nil { diverge(pdu, "handle 0x\(Hex.pad(found.handle, 4)) was never read in the recording: answered with an empty value") }
            reply(ATTEncoding.readByTypeResponse([(found.handle, Array((value ?? []).prefix(min(liveMTU - 4, 253))))]))
        case .writeRequest, .prepareWriteRequest:
            if let answer = story.recordedAnswer(request: op, handle: handle, at: at) {
                if case .errorResponse? = TwinPDU.att(answer) { reply(answer); return }
            } else if twin.table.attribute(handle) == nil {
                // 3.4.5.1 / 3.4.6.1: a handle the server does not have is Invalid Handle.
                diverge(pdu, "handle 0x\(Hex.pad(handle, 4)) is not in the recorded database: answered Invalid Handle")
                reply(ATTEncoding.errorResponse(request: op, handle: handle, .invalidHandle)); return
            } else {
                diverge(pdu, "the recording never wrote handle 0x\(Hex.pad(handle, 4)) this way: answered as a server that accepts it")
            }
            guard case let .prepareWriteRequest(_, offset, value)? = decoded else { reply(ATTEncoding.writeResponse()); return }
            let part = TwinPDU.bytes(value, of: p)
            prepared.append((handle, offset, part))
            reply(ATTEncoding.prepareWriteResponse(handle: handle, offset: offset, part: part[...]))
        case .executeWriteRequest:
            prepared.removeAll()
            reply(ATTEncoding.executeWriteResponse())
        case .writeCommand, .signedWriteCommand, .handleValueConfirmation:
            return   // no answer (a confirmation of an indication the story already moved past)
        default:
            guard op.kind == .request else { return }
            diverge(pdu, "\(op.name) is not in the recording: answered Request Not Supported")
            reply(ATTEncoding.errorResponse(request: op, handle: handle, .requestNotSupported))
        }
    }

    private func smp(_ p: [UInt8], pdu: [UInt8]) {
        guard let code = TwinPDU.smpCode(p), code != .pairingFailed else { (pairing, secure) = (nil, nil); return }   // the central's own Pairing Failed ends it
        if livePairing(p, pdu: pdu) { return }
        if let failed = twin.story.pairingFailed {
            notes.append("pairing: answered with the device's recorded Pairing Failed (reason 0x\(Hex.pad(TwinPDU.failureReason(failed)?.rawValue ?? 0, 2)))"
                         + (pairingRefusal.map { ": \($0)" } ?? ""))
            send(L2CAP.ChannelID.smp.rawValue, failed)
            return
        }
        // Pairing Failed, reason 0x05 Pairing Not Supported (Core v5.4 Vol 3 Part H 3.5.5).
        diverge(pdu, twin.story.pairingRecorded
                ? "pairing is not reproduced (\(pairingRefusal ?? "no pairing of the twin's under way")): answered Pairing Failed (Pairing Not Supported)"
                : "the recording has no pairing: answered Pairing Failed (Pairing Not Supported)")
        sendPairingFailed(.pairingNotSupported)
    }

    private func reply(_ att: [UInt8]) { send(L2CAP.ChannelID.att.rawValue, att) }

    func send(_ channel: UInt16, _ payload: [UInt8]) {
        schedule([(L2CAPEncoding.basicFrame(channel: channel, payload), 0)], reference: 0)
    }

    func diverge(_ pdu: [UInt8], _ rule: String) {
        let unit = liveUnit(pdu)
        divergences.append(Divergence(kind: .unexpected, frame: nil, step: max(0, position + 1), fromHost: true,
                                      message: "\(unit.title): not in the recording; \(rule)", differences: [], expected: nil, actual: unit))
    }
}
