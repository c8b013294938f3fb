import BLEBytes
import BLECapture
import BLEProtocol

/// ATT on the fixed channel: MTU, request/response pairing with latency, indications and their
/// confirmations, GATT discovery rebuilt into the database, subscriptions, value streams.
extension SessionModel {
    func att(_ pdu: ATT.PDU, _ c: Connection, frame: Frame, sent: Bool, pduFrame: Int) {
        let me = ATTBearer.Side.sender(sent: sent), peer = me.other
        let server = ATTRoles.serverIsHost(pdu.opcode, sent: sent)
        if sent { c.att.pdusSent += 1 } else { c.att.pdusReceived += 1 }
        c.att.observeClock(frame.timestamp)
        switch pdu {
        // Requests: remember them until their response.
        case let .exchangeMTURequest(mtu):
            c.att.clientMTU = mtu
            c.att.clientIsHost = sent
            c.att.lastMTURequestFrame = frame.number
            c.att.mtuRequests += 1
            if sent { c.att.mtuRequestsByHost += 1 } else { c.att.mtuRequestsByPeer += 1 }
            if c.att.mtuRequests == 1, c.att.mtuKnown, c.att.mtu == ATT.defaultLEMTU { c.att.dataBeforeFirstExchange = c.att.firstDataFrame }
            request(c, me, .init(opcode: pdu.opcode, frame: frame.number, time: frame.timestamp))
        case let .findByTypeValueRequest(req):
            c.att.discoveryRequests += 1
            // Discover Primary Service By Service UUID (Vol 3 Part G 4.4.2): the value is the service UUID.
            var uuid: BluetoothUUID? = nil
            if req.type == .primaryService || req.type == .secondaryService {
                withBytes(req.value, frame: frame) { r in uuid = try? r.uuid(width: r.remaining) }
            }
            request(c, me, .init(opcode: pdu.opcode, handle: req.range.start, type: uuid, frame: frame.number, time: frame.timestamp))
        case .findInformationRequest, .readMultipleRequest, .readMultipleVariableRequest, .executeWriteRequest:
            if case .findInformationRequest = pdu { c.att.discoveryRequests += 1 }
            request(c, me, .init(opcode: pdu.opcode, frame: frame.number, time: frame.timestamp))
        case let .readByTypeRequest(range, type), let .readByGroupTypeRequest(range, type):
            c.att.discoveryRequests += 1
            request(c, me, .init(opcode: pdu.opcode, handle: range.start, type: type, frame: frame.number, time: frame.timestamp))
        case let .readRequest(handle):
            request(c, me, .init(opcode: pdu.opcode, handle: handle, frame: frame.number, time: frame.timestamp))
        case let .readBlobRequest(handle, offset):
            request(c, me, .init(opcode: pdu.opcode, handle: handle, offset: offset, frame: frame.number, time: frame.timestamp))
        case let .writeRequest(handle, value), let .prepareWriteRequest(handle, _, value):
            request(c, me, .init(opcode: pdu.opcode, handle: handle, valueLength: value.count, frame: frame.number, time: frame.timestamp))
            let overhead = pdu.opcode == .prepareWriteRequest ? 5 : 3   // opcode, handle (, offset)
            transferPDU(c, .writeRequest, value: value.count, attLength: value.count + overhead, overhead: overhead,
                        time: frame.timestamp, frame: frame.number, sent: sent)
            if case .writeRequest = pdu {
                emit(.attWrite, .attWrite(c, handle: handle, length: value.count, command: false, frame: frame.number, time: frame.timestamp, sent: sent))
            }
            if case .writeRequest = pdu { cccdWrite(c, handle: handle, value: value, frame: frame, sent: sent, pending: true, server: server) }
        case let .writeCommand(handle, value), let .signedWriteCommand(handle, value, _):
            writeStream(c, handle, value.count, frame: frame, server: server)
            let overhead = pdu.opcode == .signedWriteCommand ? 15 : 3   // opcode, handle (, 12-byte signature)
            transferPDU(c, .writeCommand, value: value.count, attLength: value.count + overhead, overhead: overhead,
                        time: frame.timestamp, frame: frame.number, sent: sent)
            emit(.attWrite, .attWrite(c, handle: handle, length: value.count, command: true, frame: frame.number, time: frame.timestamp, sent: sent))
            cccdWrite(c, handle: handle, value: value, frame: frame, sent: sent, pending: false, server: server)

        // Responses: pair with the peer's outstanding request.
        case let .exchangeMTUResponse(mtu):
            guard response(c, peer, frame: frame, pdu: pdu, sent: sent) != nil else { return }
            c.att.serverMTU = mtu
            let effective = max(ATT.defaultLEMTU, Int(min(mtu, c.att.clientMTU ?? mtu)))
            c.att.mtu = effective
            c.att.mtuKnown = true
            c.att.mtuFrame = frame.number
            c.att.mtuTime = frame.timestamp
            emit(.mtu, .mtuExchanged(c, requestFrame: c.att.lastMTURequestFrame ?? frame.number, frame: frame.number, time: frame.timestamp))
            c.note(frame.timestamp, frame.number, .mtu, .mtuExchanged(client: c.att.clientMTU, server: mtu, effective: effective), .init(mtu: effective))
        case let .errorResponse(requestOpcode, handle, error):
            let p = response(c, peer, frame: frame, opcode: pdu.opcode, valueLength: 0, sent: sent, requestOpcode: requestOpcode)
            transferAnswered(c, p, requestSentByHost: !sent, at: frame.timestamp)
            c.att.errors += 1
            emit(.attResponse, .attError(c, request: p, error: error, handle: handle, frame: frame.number, time: frame.timestamp, sent: sent))
            if error == .databaseOutOfSync {
                c.att.serviceChanged = .init(range: 1...0xFFFF, frame: frame.number, time: frame.timestamp, clientIsHost: !sent, outOfSync: true)
                emit(.gattChange, .databaseChanged(c))
            }
            if error == .attributeNotFound, Self.isDiscovery(requestOpcode) { return }
            if let p, let h = p.handle, c.gatt(serverIsHost: server)?.isCCCD(h) == true || c.subscriptions[h] != nil {
                c.subscriptions[h]?.outcome = .failed(error)
                if let sub = c.subscriptions[h] {
                    emit(.subscription, .subscriptionAnswered(c, sub, responseFrame: frame.number, time: frame.timestamp))
                }
                c.note(frame.timestamp, frame.number, .subscribeFailed, .subscriptionFailed(characteristic: describeCCCDOwner(c, h, server), error: error),
                       cccdFields(c, h, server))
                return
            }
            c.note(frame.timestamp, frame.number, .attError,
                   .requestFailed(request: requestOpcode, error: error, attribute: handle != 0 ? describe(c, handle, server) : nil))
        case let .readByGroupTypeResponse(resp):
            guard let p = response(c, peer, frame: frame, pdu: pdu, sent: sent) else { return }
            var db = database(for: c, serverIsHost: sent)
            for e in resp.elements {
                guard let uuid = uuidValue(e.value, frame: frame) else { continue }
                db = tableChanged(db, c, serverIsHost: sent, handle: e.handle, end: e.endGroupHandle, uuid: uuid)
                c.att.discovered(serverIsHost: sent) { $0.services += 1 }
                db.addService(handle: e.handle, end: e.endGroupHandle, uuid: uuid,
                              primary: p.type != .secondaryService, frame: frame.number)
            }
        case let .findByTypeValueResponse(handles):
            guard let p = response(c, peer, frame: frame, pdu: pdu, sent: sent), p.opcode == .findByTypeValueRequest, let uuid = p.type else { return }
            var db = database(for: c, serverIsHost: sent)
            for range in handles where range.isValid {
                db = tableChanged(db, c, serverIsHost: sent, handle: range.start, end: range.end, uuid: uuid)
                db.addService(handle: range.start, end: range.end, uuid: uuid, primary: true, frame: frame.number)
                c.att.discovered(serverIsHost: sent) { $0.services += 1 }
            }
        case let .readByTypeResponse(resp):
            guard let p = response(c, peer, frame: frame, pdu: pdu, sent: sent) else { return }
            let db = database(for: c, serverIsHost: sent)
            if p.type == .characteristic {
                for e in resp.elements { characteristicDeclaration(db, e, frame: frame) }
                c.att.discovered(serverIsHost: sent) { $0.characteristics += resp.elements.count }
            } else if p.type == .include {
                for e in resp.elements { includeDeclaration(db, e, frame: frame) }
            }
        case let .findInformationResponse(resp):
            guard response(c, peer, frame: frame, pdu: pdu, sent: sent) != nil else { return }
            let db = database(for: c, serverIsHost: sent)
            for e in resp.entries {
                db.addInformation(handle: e.handle, uuid: e.uuid, frame: frame.number)
                if db.descriptors[e.handle] != nil { c.att.discovered(serverIsHost: sent) { $0.descriptors += 1 } }
            }
        case let .readResponse(value), let .readBlobResponse(value):
            guard let p = response(c, peer, frame: frame, pdu: pdu, sent: sent), let h = p.handle else { return }
            let db = database(for: c, serverIsHost: sent)
            // Keep whole values only: a part of ATT_MTU−1 bytes may be the start of a long value.
            if p.opcode == .readRequest, value.count < c.att.mtu - 1, value.count <= GATTDatabase.maxKeptValue,
               let bytes = copy(value, frame: frame) {
                db.keepValue(h, bytes)
            }
            if p.opcode == .readRequest, c.att.discoveryRequests > 0 { reportDiscovery(c, frame: frame, serverIsHost: server) }
            longRead(c, p, h, value.count, frame: frame, server: server)
        case .writeResponse:
            let answered = response(c, peer, frame: frame, pdu: pdu, sent: sent)
            transferAnswered(c, answered, requestSentByHost: !sent, at: frame.timestamp)
            guard let p = answered, let h = p.handle else { return }
            if var s = c.subscriptions[h], s.outcome == .pending {
                s.outcome = .accepted
                c.subscriptions[h] = s
                emit(.subscription, .subscriptionAnswered(c, s, responseFrame: frame.number, time: frame.timestamp))
                c.note(frame.timestamp, frame.number, .subscribe,
                       .subscriptionAccepted(byPeer: server, value: s.value, characteristic: describeCCCDOwner(c, h, server)), cccdFields(c, h, server))
            }
        case .prepareWriteResponse:
            let answered = response(c, peer, frame: frame, pdu: pdu, sent: sent)
            transferAnswered(c, answered, requestSentByHost: !sent, at: frame.timestamp)
            guard let p = answered, let h = p.handle else { return }
            var w = c.att.preparedWrite ?? (h, 0, 0, p.frame)
            w.bytes += p.valueLength
            w.requests += 1
            c.att.preparedWrite = w
        case .executeWriteResponse:
            guard response(c, peer, frame: frame, pdu: pdu, sent: sent) != nil else { return }
            if let w = c.att.preparedWrite {
                c.note(frame.timestamp, frame.number, .write, .longWrite(attribute: describe(c, w.handle, server), bytes: w.bytes, requests: w.requests))
            }
            c.att.preparedWrite = nil
        case .readMultipleResponse, .readMultipleVariableResponse:
            _ = response(c, peer, frame: frame, pdu: pdu, sent: sent)

        // Server-initiated values.
        case let .handleValueNotification(handle, value):
            notification(c, handle, value.count, frame: frame, sent: sent)
            stream(c, handle, value.count, frame: frame, sent: sent, indication: false, server: server)
            transferPDU(c, .notification, value: value.count, attLength: value.count + 3, overhead: 3,
                        time: frame.timestamp, frame: frame.number, sent: sent)
        case let .multipleHandleValueNotification(m):
            var values = 0, length = 1   // opcode, then handle, length and value per pair (Vol 3 Part F 3.4.7.4)
            for v in m.values { values += v.value.count; length += 4 + v.value.count }
            transferPDU(c, .notification, value: values, attLength: length, overhead: -1,
                        time: frame.timestamp, frame: frame.number, sent: sent)
            for v in m.values {
                notification(c, v.handle, v.value.count, frame: frame, sent: sent)
                stream(c, v.handle, v.value.count, frame: frame, sent: sent, indication: false, server: server)
            }
        case let .handleValueIndication(handle, value):
            if c.att.firstDataFrame == nil, !(sent && isServiceChanged(c, handle, length: value.count)) { c.att.firstDataFrame = frame.number }
            presumedSubscription(c, valueHandle: handle, sent: sent, frame: frame)
            emit(.attIndication, .attValue(c, handle: handle, length: value.count, indication: true, frame: frame.number, time: frame.timestamp,
                                 sent: sent, unconfirmed: c.att.unconfirmedIndication(from: me), first: c.valueStreams[handle] == nil))
            stream(c, handle, value.count, frame: frame, sent: sent, indication: true, server: server)
            transferPDU(c, .indication, value: value.count, attLength: value.count + 3, overhead: 3,
                        time: frame.timestamp, frame: frame.number, sent: sent)
            c.att.indicate(.init(opcode: pdu.opcode, handle: handle, frame: frame.number, time: frame.timestamp), from: me)
            if c.gatt(serverIsHost: sent)?.characteristic(valueHandle: handle)?.uuid == GATTValues.serviceChangedUUID {
                withBytes(value, frame: frame) { r in
                    guard let range = GATTValues.serviceChangedRange(r) else { return }
                    c.att.serviceChanged = .init(range: range.start...range.end, frame: frame.number, time: frame.timestamp,
                                                 clientIsHost: !sent, outOfSync: false)
                    emit(.gattChange, .databaseChanged(c))
                }
            }
        case .handleValueConfirmation:
            emit(.attIndication, .attConfirmation(c, indication: c.att.unconfirmedIndication(from: peer), frame: frame.number, time: frame.timestamp))
            let confirmed = c.att.confirm(indicationFrom: peer)
            transferAnswered(c, confirmed, requestSentByHost: !sent, at: frame.timestamp)
            if let ind = confirmed, let h = ind.handle {
                c.valueStreams[h]?.confirmations += 1
            }
        case .unknown:
            break
        }
    }

    static func valueLength(_ pdu: ATT.PDU) -> Int {
        switch pdu {
        case let .readResponse(v), let .readBlobResponse(v): v.count
        default: 0
        }
    }

    static func isDiscovery(_ op: ATTOpcode) -> Bool {
        op == .readByGroupTypeRequest || op == .readByTypeRequest || op == .findInformationRequest || op == .findByTypeValueRequest
    }

    private func request(_ c: Connection, _ side: ATTBearer.Side, _ p: ATTBearer.Pending) {
        var p = p
        p.sentByHost = side == .host
        if malformedATT { p.malformed = true }
        if c.att.firstDataFrame == nil, p.opcode != .exchangeMTURequest, !Self.isDiscovery(p.opcode), !isCCCDWrite(c, p, side) { c.att.firstDataFrame = p.frame }
        let overlapping = c.att.request(p, from: side)
        emit(.attRequest, .attRequest(c, p, sent: side == .host, overlapping: overlapping))
        if !Self.isDiscovery(p.opcode), p.opcode != .exchangeMTURequest, c.att.discoveryRequests > 0 {
            reportDiscovery(c, frame: nil, serverIsHost: side == .peer)
        }
    }

    /// Pairs a response with the outstanding request of the other side; nil when there was none.
    private func response(_ c: Connection, _ requester: ATTBearer.Side, frame: Frame, pdu: ATT.PDU, sent: Bool) -> ATTBearer.Pending? {
        response(c, requester, frame: frame, opcode: pdu.opcode, valueLength: Self.valueLength(pdu), sent: sent)
    }

    private func response(_ c: Connection, _ requester: ATTBearer.Side, frame: Frame, opcode: ATTOpcode, valueLength: Int, sent: Bool,
                          requestOpcode: ATTOpcode? = nil) -> ATTBearer.Pending? {
        if c.att.outstanding(from: requester) == nil { answeredPartialRequest(c, requester, frame: frame) }
        if opcode != .errorResponse {
            emit(.attResponse, .attResponse(c, request: c.att.outstanding(from: requester), opcode: opcode, valueLength: valueLength,
                                            frame: frame.number, time: frame.timestamp, sent: sent))
        }
        let p = c.att.answer(requester: requester, at: frame.timestamp, error: opcode == .errorResponse, requestOpcode: requestOpcode)
        if let p, Self.isDiscovery(p.opcode) { c.att.lastDiscoveryResponse = (frame.number, frame.timestamp) }
        return p
    }

    /// A 2-byte Write Request to a Client Characteristic Configuration descriptor: GATT configuration, not data.
    private func isCCCDWrite(_ c: Connection, _ p: ATTBearer.Pending, _ side: ATTBearer.Side) -> Bool {
        guard p.opcode == .writeRequest, p.valueLength == 2, let h = p.handle else { return false }
        return looksLikeCCCD(c, h, side == .peer)
    }

    /// A CCCD by discovery, or the handle after a characteristic value that can notify or indicate.
    func looksLikeCCCD(_ c: Connection, _ handle: UInt16, _ serverIsHost: Bool) -> Bool {
        c.gatt(serverIsHost: serverIsHost)?.looksLikeCCCD(handle) == true
    }

    /// The host's own Service Changed indication (Core v5.4 Vol 3 Part G 7.1: a 4-byte handle range),
    /// sent by the OS's GATT server, not by the application: by discovery, or by its shape.
    private func isServiceChanged(_ c: Connection, _ handle: UInt16, length: Int) -> Bool {
        if let ch = c.localGATT?.characteristic(valueHandle: handle) { return ch.uuid == GATTValues.serviceChangedUUID }
        return length == 4
    }

    /// A response while the requester's ATT request is still incomplete in reassembly: the server
    /// answered a PDU whose L2CAP length claims more bytes than were sent (a lying length). That
    /// request is the one answered, malformed. Not when the sniffer lost packets since it started.
    private func answeredPartialRequest(_ c: Connection, _ requester: ATTBearer.Side, frame: Frame) {
        guard let partial = requester == .host ? c.att.partialSent : c.att.partialReceived,
              ATTOpcode(partial.opcode).kind == .request, c.snifferLoss.captureLossFrame < partial.frame else { return }
        if requester == .host { c.att.partialSent = nil } else { c.att.partialReceived = nil }
        let wasMalformed = malformedATT
        malformedATT = true
        request(c, requester, .init(opcode: ATTOpcode(partial.opcode), frame: partial.frame, time: frame.timestamp))
        malformedATT = wasMalformed
    }

    private func reportDiscovery(_ c: Connection, frame: Frame?, serverIsHost: Bool) {
        guard !c.att.discoveryReported, let db = c.gatt(serverIsHost: serverIsHost), !db.isEmpty else { return }
        c.att.discoveryReported = true
        // Stamped where discovery ran: its last response (else the frame that ended it).
        let at = c.att.lastDiscoveryResponse ?? (frame?.number ?? c.traffic.lastSentFrame ?? 0, frame?.timestamp ?? c.traffic.lastDataTime ?? 0)
        c.note(at.time, at.frame, .discovery, .discovery(services: db.services.count, characteristics: db.characteristics.count,
                                                         descriptors: db.descriptors.count))
    }

    /// The discovery line tells the table this connection's discovery found in the end: an app that
    /// discovers one service, uses it, then discovers the rest would otherwise show the first part.
    func retellDiscovery() {
        for c in connections {
            guard let i = c.timeline.firstIndex(where: { $0.kind == .discovery }) else { continue }
            // What this connection's discovery found (counted as it ran: the table's entries keep the
            // frame of their latest discovery, which a later connection's rediscovery moves): the
            // peer's table (the host discovered it), else the host's own (the peer discovered it).
            for found in [c.att.discoveredPeer, c.att.discoveredLocal] where found.services + found.characteristics + found.descriptors > 0 {
                c.retell(i, .discovery(services: found.services, characteristics: found.characteristics, descriptors: found.descriptors))
                break
            }
        }
    }

    private func cccdWrite(_ c: Connection, handle: UInt16, value: ByteRange, frame: Frame, sent: Bool, pending: Bool, server: Bool) {
        guard value.count == 2, let v = copy(value, frame: frame)?.withReader({ $0.getU16le(at: 0) }) else { return }   // CCCD value, Vol 3 Part G 3.3.3.3
        let db = c.gatt(serverIsHost: server)
        guard db?.looksLikeCCCD(handle) == true else {
            // Handles no discovery described: perhaps a cached CCCD, decided by the values that follow.
            if db?.owningCharacteristic(of: handle) == nil, v == 1 || v == 2,
               c.att.presumedCCCDWrites.count < ATTBearer.maxPresumedCCCDWrites {
                c.att.presumedCCCDWrites.append((handle, v, frame.number, frame.timestamp, server))
            }
            return
        }
        var sub = Subscription(cccdHandle: handle, value: v, frame: frame.number, time: frame.timestamp,
                               outcome: pending ? .pending : .accepted)
        sub.serverIsHost = server
        c.subscriptions[handle] = sub
        emit(.subscription, .subscriptionWritten(c, sub, characteristic: db?.owningCharacteristic(of: handle)))
        if !pending {
            c.note(frame.timestamp, frame.number, .subscribe, .cccdWrittenByCommand(value: v, characteristic: describeCCCDOwner(c, handle, server)),
                   cccdFields(c, handle, server))
        }
    }

    /// The first value of `handle` after a 2-byte write of 0x0001/0x0002 to `handle + 1` that no
    /// discovery described: that write was the subscription (a client with cached handles, Core v5.4
    /// Vol 3 Part G 3.3.3.3: the CCCD follows its value).
    private func presumedSubscription(_ c: Connection, valueHandle: UInt16, sent: Bool, frame: Frame) {
        guard !c.att.presumedCCCDWrites.isEmpty, c.valueStreams[valueHandle] == nil,
              let i = c.att.presumedCCCDWrites.firstIndex(where: { $0.handle == valueHandle &+ 1 && $0.serverIsHost == sent }) else { return }
        let w = c.att.presumedCCCDWrites.remove(at: i)
        let answered = !c.att.allOutstanding.contains { $0.frame == w.frame }
        var sub = Subscription(cccdHandle: w.handle, value: w.value, frame: w.frame, time: w.time, outcome: answered ? .accepted : .pending)
        sub.serverIsHost = w.serverIsHost
        c.subscriptions[w.handle] = sub
        emit(.subscription, .subscriptionWritten(c, sub, characteristic: nil))
        c.note(w.time, w.frame, .subscribe, .cachedSubscription(byPeer: sent, value: w.value, valueHandle: valueHandle, cccd: w.handle),
               .init(handle: valueHandle))
    }

    /// Emits a notification to the rules that care: the first of its handle, or one filling ATT_MTU−3.
    private func notification(_ c: Connection, _ handle: UInt16, _ length: Int, frame: Frame, sent: Bool) {
        if c.att.firstDataFrame == nil { c.att.firstDataFrame = frame.number }
        presumedSubscription(c, valueHandle: handle, sent: sent, frame: frame)
        let first = c.valueStreams[handle] == nil
        if first {
            emit(.attValueFirst, .attValue(c, handle: handle, length: length, indication: false, frame: frame.number,
                                           time: frame.timestamp, sent: sent, unconfirmed: nil, first: true))
        }
        if length == c.att.mtu - 3 {
            emit(.attValueFull, .attValue(c, handle: handle, length: length, indication: false, frame: frame.number,
                                          time: frame.timestamp, sent: sent, unconfirmed: nil, first: first))
        }
    }

    private func stream(_ c: Connection, _ handle: UInt16, _ length: Int, frame: Frame, sent: Bool, indication: Bool, server: Bool) {
        if recordsActivity { c.activity.record(frame.timestamp) { $0.values += 1 } }
        var first = false
        c.valueStreams.update(handle, initial: { ValueStream(handle: handle) }) { s in
            if s.notifications + s.indications == 0 {
                s.firstFrame = frame.number
                s.firstTime = frame.timestamp
                s.sentByHost = sent
                first = true
            }
            if indication { s.indications += 1 } else { s.notifications += 1 }
            s.bytes += length
            s.maxLength = max(s.maxLength, length)
            if c.att.mtuKnown {
                if length == c.att.mtu - 3 { s.fullValues += 1 } else if length < c.att.mtu - 3 { s.shorterValues += 1 }
            }
            s.lastFrame = frame.number
            s.lastTime = frame.timestamp
        }
        if first {
            c.note(frame.timestamp, frame.number, indication ? .indications : .notifications,
                   .firstValue(indication: indication, sent: sent, attribute: describe(c, handle, server), length: length),
                   .init(handle: handle, uuid: c.gatt(serverIsHost: server)?.characteristic(valueHandle: handle)?.uuid, firstOfHandle: true))
        }
    }

    /// An ATT PDU the capture cut (btsnooz keeps 14 bytes of ACL): its opcode and handle still keep
    /// the request/response pairing right, but values are not decidable, so no value events are emitted.
    func attTruncated(_ opcode: ATTOpcode, handle: UInt16?, _ c: Connection, frame: Frame, sent: Bool) {
        let me = ATTBearer.Side.sender(sent: sent), peer = me.other
        if sent { c.att.pdusSent += 1 } else { c.att.pdusReceived += 1 }
        switch opcode.kind {
        case .request?:
            request(c, me, .init(opcode: opcode, handle: handle, frame: frame.number, time: frame.timestamp))
        case .response?:
            _ = response(c, peer, frame: frame, opcode: opcode, valueLength: 0, sent: sent)
        case .indication?:
            c.att.indicate(.init(opcode: opcode, handle: handle, frame: frame.number, time: frame.timestamp), from: me)
        case .confirmation?:
            c.att.confirm(indicationFrom: peer)
        default:
            break
        }
    }

    /// An ATT PDU the decoder could not read (its parameters do not fit its opcode): a request still
    /// waits for its response (marked malformed, so the rules can tell a server that answers it), a
    /// response still ends its transaction; anything else is noted as undecodable on the link.
    func attUndecodable(_ opcode: ATTOpcode, _ c: Connection, frame: Frame, sent: Bool) {
        switch opcode.kind {
        case .request?, .response?:
            let wasMalformed = malformedATT
            malformedATT = true
            attTruncated(opcode, handle: nil, c, frame: frame, sent: sent)
            malformedATT = wasMalformed
        default:
            c.att.noteUndecoded(frame.number, sent: sent)
        }
    }

    /// Read then Read Blob on the same handle until a part shorter than ATT_MTU−1 (Vol 3 Part G 4.8.3).
    private func longRead(_ c: Connection, _ p: ATTBearer.Pending, _ handle: UInt16, _ length: Int, frame: Frame, server: Bool) {
        let full = c.att.mtu - 1
        if p.opcode == .readRequest {
            c.att.longRead = length == full ? (handle, length, 1, p.frame) : nil
            return
        }
        guard var lr = c.att.longRead, lr.handle == handle else { return }
        lr.bytes += length
        lr.requests += 1
        if length < full {
            c.note(frame.timestamp, frame.number, .read, .longRead(attribute: describe(c, handle, server), bytes: lr.bytes, requests: lr.requests))
            c.att.longRead = nil
        } else {
            c.att.longRead = lr
        }
    }

    private func writeStream(_ c: Connection, _ handle: UInt16, _ length: Int, frame: Frame, server: Bool) {
        if c.att.firstDataFrame == nil, !(length == 2 && looksLikeCCCD(c, handle, server)) { c.att.firstDataFrame = frame.number }
        if recordsActivity { c.activity.record(frame.timestamp) { $0.writes += 1 } }
        c.writeStreams.update(handle, initial: { ValueStream(handle: handle) }) { s in
            if s.notifications == 0 { s.firstFrame = frame.number; s.firstTime = frame.timestamp; s.sentByHost = frame.direction != .received }
            s.notifications += 1
            s.bytes += length
            s.maxLength = max(s.maxLength, length)
            s.lastFrame = frame.number
            s.lastTime = frame.timestamp
        }
    }

    func describe(_ c: Connection, _ handle: UInt16, _ serverIsHost: Bool) -> String {
        c.attributeName(handle, serverIsHost: serverIsHost)
    }

    /// Typed fields of a subscription event: the value handle and UUID of the characteristic owning the CCCD.
    func cccdFields(_ c: Connection, _ cccd: UInt16, _ serverIsHost: Bool) -> TimelineEvent.Fields {
        if let owner = c.gatt(serverIsHost: serverIsHost)?.owningCharacteristic(of: cccd) {
            return .init(handle: owner.valueHandle, uuid: owner.uuid)
        }
        return .init(handle: cccd &- 1)
    }

    func describeCCCDOwner(_ c: Connection, _ cccd: UInt16, _ serverIsHost: Bool) -> String {
        if let owner = c.gatt(serverIsHost: serverIsHost)?.owningCharacteristic(of: cccd) {
            return owner.uuid.gattLabel(.characteristic) + " @0x" + Hex.pad(owner.valueHandle, 4)
        }
        return "CCCD 0x" + Hex.pad(cccd, 4)
    }

    /// A characteristic declaration from Read By Type (layout: `GATTDeclaration.Characteristic`).
    private func characteristicDeclaration(_ db: GATTDatabase, _ e: ATT.HandleValue, frame: Frame) {
        withBytes(e.value, frame: frame) { r in
            guard let d = try? GATTDeclaration.Characteristic.read(&r) else { return }
            db.addCharacteristic(declaration: e.handle, value: d.valueHandle, properties: d.properties, uuid: d.uuid, frame: frame.number)
        }
    }

    /// An include declaration from Read By Type (layout: `GATTDeclaration.Include`).
    private func includeDeclaration(_ db: GATTDatabase, _ e: ATT.HandleValue, frame: Frame) {
        withBytes(e.value, frame: frame) { r in
            guard let d = try? GATTDeclaration.Include.read(&r) else { return }
            db.addInclude(handle: e.handle, range: d.range, uuid: d.uuid)
        }
    }

    private func uuidValue(_ range: ByteRange, frame: Frame) -> BluetoothUUID? {
        var out: BluetoothUUID? = nil
        withBytes(range, frame: frame) { r in out = try? r.uuid(width: r.remaining) }
        return out
    }

    /// Runs `body` on the bytes of `range`, which must lie in the current frame or PDU.
    func withBytes(_ range: ByteRange, frame: Frame, _ body: (inout ByteReader) -> Void) {
        if let bytes = currentPDU, range.offset >= bytes.base, range.offset + range.count <= bytes.base + bytes.count {
            let start = range.offset - bytes.base
            var r = ByteReader(UnsafeRawBufferPointer(rebasing: bytes.buffer[start ..< start + range.count]), base: range.offset)
            body(&r)
            return
        }
        let start = range.offset - frame.payloadOffset
        guard start >= 0, start + range.count <= frame.payload.count else { return }
        var r = ByteReader(UnsafeRawBufferPointer(rebasing: frame.payload[start ..< start + range.count]), base: range.offset)
        body(&r)
    }

    func copy(_ range: ByteRange, frame: Frame) -> [UInt8]? {
        var out: [UInt8]? = nil
        withBytes(range, frame: frame) { r in out = Array(r.remainingBytes) }
        return out
    }
}
