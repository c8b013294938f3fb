import BLEBytes
import BLECapture
import BLEProtocol

/// HCI commands and events (Core v5.4 Vol 4 Part E 7): connection attempts and their outcome,
/// connections opened and closed, parameters, encryption, advertising set-up, controller versions.
extension SessionModel {
    // MARK: Commands

    func command(_ cmd: HCICommand, frame: Frame) {
        switch cmd {
        case let .createConnection(type, address, isLE):
            // The attempt waits for its Command Status: a create the controller rejects (Command
            // Disallowed while one is pending) must not replace the attempt still pending.
            let slot = AttemptSlot(adapter: frame.adapter, isLE: isLE)
            if attempts.count < Self.maxAttempts {
                var a = ConnectionAttempt(adapter: frame.adapter, isLE: isLE, peerAddress: address, peerAddressType: type,
                                          frame: frame.number, time: frame.timestamp)
                a.issuedWhilePending = pendingAttempt[slot]
                attempts.append(a)
                awaitingStatus[slot] = attempts.count - 1
            }
        case let .createConnectionCancel(isLE):
            let slot = AttemptSlot(adapter: frame.adapter, isLE: isLE)
            promoteAwaiting(slot, frame: frame)
            if let i = pendingAttempt[slot] { attempts[i].cancelFrame = frame.number }
        case let .connectionUpdate(handle):
            lastConnectionUpdate = (handle, frame.number)
        case let .setAdvertisingData(scanResponse, declared, data):
            _ = scanResponse
            var problem: String? = nil
            if declared > 31 {
                problem = "advertising data length \(declared) exceeds the 31 bytes of legacy advertising"
            } else {
                let start = data.offset - frame.payloadOffset
                if start >= 0, start + data.count <= frame.payload.count {
                    var a = Advertisers.Advertiser(address: BDAddr(0), addressType: .publicDevice)
                    let r = ByteReader(UnsafeRawBufferPointer(rebasing: frame.payload[start ..< start + data.count]), base: data.offset)
                    problem = Advertisers.absorb(r, into: &a).map { "\($0.text) (at offset \(data.offset + $0.at))" }
                }
            }
            emit(.advertising, .advertisingData(frame: frame.number, time: frame.timestamp, declaredLength: Int(declared), problem: problem))
        case let .setAdvertisingEnable(enabled):
            emit(.advertising, .advertisingEnable(frame: frame.number, time: frame.timestamp, adapter: frame.adapter, enabled: enabled))
            radio?.enable(.advertising, enabled, frame: frame)
        case let .setScanEnable(enabled):
            radio?.enable(.scanning, enabled, frame: frame)
            scanCommand(enabled: enabled, frame: frame)
        case let .enableEncryption(handle, key):
            lastEncryptionCommand = handle
            guard let c = live[LinkKey(adapter: frame.adapter, handle: handle)] else { return }
            c.forensics.pendingEncryption = .init(frame: frame.number, time: frame.timestamp)
            if let key, let ltk = copy(key.longTermKey, frame: frame) { rememberKey(ltk, c) }
        case let .longTermKeyReply(handle, key):
            if let c = live[LinkKey(adapter: frame.adapter, handle: handle)], let key, let ltk = copy(key, frame: frame) { rememberKey(ltk, c) }
        case let .disconnect(handle, reason):
            if let c = live[LinkKey(adapter: frame.adapter, handle: handle)] {
                c.lifecycle.localDisconnectReason = reason
                c.forensics.localDisconnect = .init(frame: frame.number, time: frame.timestamp)
                c.forensics.localDisconnectOnAir = frame.kind == .airLE
            }
        case let .pairingAnswer(address, accepted):
            if !accepted, simplePairing.count < 64 || simplePairing[address] != nil { simplePairing[address, default: (nil, nil)].rejected = frame.number }
            if !accepted, let c = classicLink(address, frame) {
                c.encryption.declinedFrame = frame.number
                c.note(frame.timestamp, frame.number, .security, .pairingDeclined, .init(security: .pairingDeclined))
            }
        case let .ioCapabilityReply(address, capabilities):
            guard let c = classicLink(address, frame) else { return }
            c.encryption.hostCapabilities = capabilities
            sspMethod(c, frame)
        case let .linkKeyAnswer(address, found):
            guard let c = classicLink(address, frame) else { return }
            if found, c.encryption.linkKey == nil, let earlier = classicPeers[address]?.linkKey {
                c.encryption.linkKey = earlier
                c.encryption.linkKeyFromEarlier = true
            }
            c.note(frame.timestamp, frame.number, .security, .storedLinkKey(found: found), .init(security: found ? .storedKey : .noStoredKey))
        case let .inquiry(length, periodic):
            controller.inquiry[frame.adapter] = (.init(frame: frame.number, time: frame.timestamp), length, periodic)
        case .inquiryCancel:
            inquiryEnded(frame: frame)
        case let .secureConnectionsHostSupport(enabled):
            controller.secureConnectionsHostWrite[frame.adapter] = enabled
        case .reset:
            controller.audio[frame.adapter] = nil
            // HCI_Reset ends the links of the controller it was sent to, not those of other adapters
            // in the same (monitor) capture.
            controllerReset(closing: live.filter { $0.key.adapter == frame.adapter }.values.sorted { $0.index < $1.index }, frame: frame)
            for (key, c) in live where key.adapter == frame.adapter {
                c.lifecycle.disconnectFrame = frame.number
                c.lifecycle.disconnectTime = frame.timestamp
                c.note(frame.timestamp, frame.number, .disconnected, .closedByReset)
                _ = flow.dropLink(c)
                c.buffers.unacknowledged.removeAll()
                c.linkEnded()
                live[key] = nil
            }
            if frame.adapter == 0 { for i in adapter0.indices { adapter0[i] = nil } }
            lastLink = nil
            for isLE in [true, false] {
                pendingAttempt[AttemptSlot(adapter: frame.adapter, isLE: isLE)] = nil
                awaitingStatus[AttemptSlot(adapter: frame.adapter, isLE: isLE)] = nil
            }
        default:
            break
        }
    }

    // MARK: Events

    func event(_ event: HCIEvent, frame: Frame, status: inout FrameStatus) {
        controller.eventSeen(adapter: frame.adapter, .init(frame: frame.number, time: frame.timestamp))
        switch event {
        case let .connectionComplete(cc):
            connectionComplete(cc, frame: frame)
        case let .disconnectionComplete(status, handle, reason):
            guard status == .success else { return }
            if controller.audio[frame.adapter]?.removeValue(forKey: handle) != nil { return }
            let key = LinkKey(adapter: frame.adapter, handle: handle)
            guard let c = live.removeValue(forKey: key) else { return }
            if key.adapter == 0, key.handle < 0x1000 { adapter0[Int(key.handle)] = nil }
            lastLink = nil
            c.lifecycle.disconnectFrame = frame.number
            c.lifecycle.disconnectTime = frame.timestamp
            c.lifecycle.disconnectReason = reason
            if reason == .connectionFailedToBeEstablished, let a = c.peerAddress {
                failedToEstablish[a, default: 0] += 1
                c.lifecycle.establishFailureOrdinal = failedToEstablish[a, default: 0]
            }
            signOfLife(c, .disconnected(reason), frame: frame)
            procedureStatus(c, reason, .disconnection, frame: frame)
            c.note(frame.timestamp, frame.number, .disconnected, .disconnected(reason: reason, byHost: c.lifecycle.localDisconnectReason != nil),
                   .init(reason: reason.rawValue))
            emit(.connection, .disconnected(c, unacknowledged: c.buffers.unacknowledged.all))
            c.buffers.unacknowledged.removeAll()
            _ = flow.dropLink(c)
            reassembler.reset(adapter: frame.adapter, handle: handle)
            c.linkEnded()
        case let .commandStatus(status, numPackets, opcode):
            commandAnswered(opcode, status: status, numPackets: numPackets, frame: frame)
            if status != .success {
                refused(opcode, status, frame: frame)
                procedureStatus(nil, status, .command(opcode), frame: frame)
                commandFeatureRefused(opcode, status, frame: frame)
            }
            if opcode == .leEnableEncryption, status != .success {
                // The encryption attempt was refused; the connection is the one the command named.
                if let c = lastEncryptionCommand.flatMap({ live[LinkKey(adapter: frame.adapter, handle: $0)] }) {
                    c.encryption.encryptionFailures += 1
                    emit(.security, .encryptionChanged(c, frame: frame.number, time: frame.timestamp, status: status, enabled: false))
                }
                return
            }
            if opcode == .leConnectionUpdate, let update = lastConnectionUpdate {
                lastConnectionUpdate = nil
                if status == .success {
                    live[LinkKey(adapter: frame.adapter, handle: update.handle)]?.forensics.pendingConnectionUpdate = .init(frame: update.frame, time: frame.timestamp)
                } else if let c = live[LinkKey(adapter: frame.adapter, handle: update.handle)] {
                    c.note(frame.timestamp, frame.number, .parameters, .connectionUpdateRefused(status))
                    emit(.link, .parameterUpdateRefused(c, commandFrame: update.frame, frame: frame.number, time: frame.timestamp, status: status, completed: false))
                }
                return
            }
            guard [.leCreateConnection, .leExtendedCreateConnection, .leExtendedCreateConnectionV2, .createConnection].contains(opcode)
            else { return }
            let slot = AttemptSlot(adapter: frame.adapter, isLE: opcode != .createConnection)
            if let i = awaitingStatus.removeValue(forKey: slot) {
                attempts[i].statusFrame = frame.number
                if status != .success {
                    // Rejected: whatever was pending stays pending.
                    attempts[i].outcome = .failed(status)
                    attempts[i].endFrame = frame.number
                    attempts[i].endTime = frame.timestamp
                    emit(.attempt, .attemptStarted(index: i))
                    emit(.attempt, .attemptEnded(index: i))
                } else {
                    start(i, slot: slot, frame: frame)
                }
                return
            }
            guard let i = pendingAttempt[slot] else { return }
            attempts[i].statusFrame = frame.number
            if status != .success {
                attempts[i].outcome = .failed(status)
                attempts[i].endFrame = frame.number
                attempts[i].endTime = frame.timestamp
                pendingAttempt[slot] = nil
                emit(.attempt, .attemptEnded(index: i))
            }
        case let .commandComplete(cc):
            commandAnswered(cc.opcode, status: cc.status, numPackets: cc.numPackets, frame: frame)
            guard cc.status == .success || cc.status == nil else {
                if let status = cc.status {
                    refused(cc.opcode, status, frame: frame)
                    commandFeatureRefused(cc.opcode, status, frame: frame)
                }
                return
            }
            var r = ByteReader(frame.payload, base: frame.payloadOffset)
            let start = cc.returnParameters.offset - frame.payloadOffset
            guard start >= 0, start <= frame.payload.count else { return }
            r = ByteReader(UnsafeRawBufferPointer(rebasing: frame.payload[start...]), base: cc.returnParameters.offset)
            if cc.opcode == .readLocalVersionInformation {
                if let v = try? LocalVersion.decode(&r) { localVersionRead(v, frame: frame) }
                return
            }
            if cc.opcode == .writeSecureConnectionsHostSupport, let enabled = controller.secureConnectionsHostWrite.removeValue(forKey: frame.adapter) {
                controller.localSecureConnections[frame.adapter, default: (nil, nil)].host = enabled
                return
            }
            if let f = try? LocalExtendedFeatures.decode(cc.opcode, &r) {
                if f.page == 2 { controller.localSecureConnections[frame.adapter, default: (nil, nil)].controller = LMPFeatures.secureConnections(page: 2, features: f.features) }
                return
            }
            if let k = try? EncryptionKeySize.decode(cc.opcode, &r) {
                if let c = live[LinkKey(adapter: frame.adapter, handle: k.handle)] { keySizeRead(c, k.size, frame: frame) }
                return
            }
            if let size = try? BufferSize.decode(cc.opcode, &r) {
                if cc.opcode == .readBufferSize { flow.aclBuffers = size } else { flow.leBuffers = size }
            }
        case let .numberOfCompletedPackets(pairs):
            guard pairs.fits(in: frame.payload, base: frame.payloadOffset) else { return }
            for i in 0 ..< pairs.count {
                let (handle, count) = pairs.pair(i, in: frame.payload, base: frame.payloadOffset)
                guard let c = liveConnection(LinkKey(adapter: frame.adapter, handle: handle)) else { continue }
                if count > 0 {
                    signOfLife(c, .completed, frame: frame)
                    c.buffers.lastCompleted = .init(frame: frame.number, time: frame.timestamp)
                }
                let n = flow.completed(c, count: Int(count))
                if n > 0 { c.buffers.unacknowledged.removeFirst(n); c.buffers.packetsCompleted += n }
                emit(.credits, .creditsReturned(c, frame: frame.number, time: frame.timestamp, returned: n, inUseAfter: flow.inUse(isLE: c.isLE)))
            }
        case let .encryptionChange(status, handle, enabled, keySize, mode):
            guard let c = live[LinkKey(adapter: frame.adapter, handle: handle)] else { return }
            procedureStatus(c, status, .encryption, frame: frame)
            // Encryption Change carrying a link-loss reason: the start was cut by the loss, which tells it
            // (`LinkEnds`) with the start still pending.
            if !LinkLoss.reasons.contains(status.rawValue) { c.forensics.pendingEncryption = nil }
            if status != .success { c.forensics.encryptionFailure = (.init(frame: frame.number, time: frame.timestamp), status) }
            if status == .success, enabled { pairingEncrypted(c, frame: frame.number) }
            emit(.security, .encryptionChanged(c, frame: frame.number, time: frame.timestamp, status: status, enabled: enabled))
            if status == .success {
                c.encryption.encrypted = enabled
                if enabled { c.encryption.everEncrypted = true }
                if let keySize, enabled { c.encryption.keySizeShown(keySize, frame: frame.number, time: frame.timestamp) }
                if c.isLE {
                    c.note(frame.timestamp, frame.number, .security, .encryption(on: enabled, keySize: keySize),
                           .init(security: enabled ? .encryptionOn : .encryptionOff))
                } else {
                    let cipher = LinkCipher.of(encryptionEnabled: mode, isLE: false)
                    if let cipher { c.encryption.cipher = cipher }
                    if cipher == .e0, c.encryption.e0Frame == nil { c.encryption.e0Frame = frame.number }
                    c.note(frame.timestamp, frame.number, .security, .classicEncryption(on: enabled, cipher: cipher, keySize: keySize),
                           .init(security: enabled ? .encryptionOn : .encryptionOff, keySize: keySize == 0 ? nil : keySize, cipher: cipher))
                    if let keySize, keySize > 0, enabled { rememberKeySize(c, keySize) }
                }
            } else {
                c.encryption.encryptionFailures += 1
                c.note(frame.timestamp, frame.number, .security, .encryptionFailed(status), .init(security: .encryptionFailed))
            }
        case let .encryptionKeyRefreshComplete(status, handle):
            guard status != .success, let c = live[LinkKey(adapter: frame.adapter, handle: handle)] else { return }
            c.forensics.encryptionFailure = (.init(frame: frame.number, time: frame.timestamp), status)
            c.encryption.encryptionFailures += 1
            emit(.security, .encryptionChanged(c, frame: frame.number, time: frame.timestamp, status: status, enabled: false))
            c.note(frame.timestamp, frame.number, .security, .keyRefreshFailed(status), .init(security: .keyRefreshFailed))
        case let .connectionUpdateComplete(status, handle, interval, latency, timeout):
            guard let c = live[LinkKey(adapter: frame.adapter, handle: handle)] else { return }
            procedureStatus(c, status, .connectionUpdate, frame: frame)
            let command = c.forensics.pendingConnectionUpdate
            c.forensics.pendingConnectionUpdate = nil
            guard status == .success else {
                // The peer never answered the procedure (LL Response Timeout) or the link died under it:
                // the disconnect that follows tells it (`LinkEnds`), not a refusal.
                if [0x08, 0x22, 0x28, 0x3D, 0x3E].contains(status.rawValue) {
                    c.forensics.failedConnectionUpdate = (command ?? .init(frame: frame.number, time: frame.timestamp),
                                                          .init(frame: frame.number, time: frame.timestamp), status)
                    c.note(frame.timestamp, frame.number, .parameters, .connectionUpdateFailed(status))
                    return
                }
                // Accepted in its Command Status, then failed in the LL procedure (e.g. 0x20 Unsupported LL
                // Parameter Value, 0x3B Unacceptable Connection Parameters): the parameters never change.
                c.note(frame.timestamp, frame.number, .parameters, .connectionUpdateFailed(status))
                emit(.link, .parameterUpdateRefused(c, commandFrame: command?.frame ?? frame.number, frame: frame.number, time: frame.timestamp, status: status, completed: true))
                return
            }
            c.forensics.lastParameterChange = .init(frame: frame.number, time: frame.timestamp)
            c.forensics.timeoutBeforeChange = c.link.timeoutUnits
            c.link.intervalUnits = interval
            c.link.latency = latency
            c.link.timeoutUnits = timeout
            c.link.parameterUpdates += 1
            c.note(frame.timestamp, frame.number, .parameters, .parameters(.init(interval: interval, latency: latency, timeout: timeout)))
        case let .dataLengthChange(handle, tx, txTime, rx, rxTime):
            guard let c = live[LinkKey(adapter: frame.adapter, handle: handle)] else { return }
            c.link.dataLength = (tx, rx)
            c.transfer.dataLengthTime = (txTime, rxTime)
            c.note(frame.timestamp, frame.number, .dataLength, .dataLength(tx: tx, rx: rx))
        case let .phyUpdateComplete(status, handle, tx, rx):
            guard let c = live[LinkKey(adapter: frame.adapter, handle: handle)] else { return }
            procedureStatus(c, status, .phyUpdate, frame: frame)
            guard status == .success else {
                // Collisions and Instant Passed are `link.procedure-collision`'s; other errors refuse the PHY.
                if !LLProcedure.collisionStatuses.contains(status.rawValue) {
                    featureRefused(c, .init(procedure: .phy, source: .updateComplete, status: status, frame: frame.number, time: frame.timestamp))
                }
                return
            }
            c.link.phy = (tx, rx)
            c.note(frame.timestamp, frame.number, .phy, .phy(tx: tx, rx: rx))
        case let .advertisingReports(reports):
            var problem: (text: String, offset: Int, address: BDAddr)? = nil
            let watch = !live.isEmpty
            reports.forEach(in: frame.payload, base: frame.payloadOffset) { report in
                if let p = advertisers.add(report, frame: frame), problem == nil { problem = (p.text, p.offset, report.address) }
                if watch, report.isConnectable, !report.isScanResponse { peerAdvertising(report.address, frame: frame) }
            }
            if let problem {
                if status == .ok { status = .malformed(reason: "advertising data: " + problem.text, offset: problem.offset) }
                emit(.advertising, .advertisingReportProblem(frame: frame.number, time: frame.timestamp, problem: problem.text,
                                                             address: problem.address))
            }
        case let .userConfirmationRequest(address, _):
            if simplePairing.count < 64 || simplePairing[address] != nil { simplePairing[address] = (SSPStep(kind: .numericComparison, frame: frame.number), nil) }
        case let .userPasskeyRequest(address):
            if simplePairing.count < 64 || simplePairing[address] != nil { simplePairing[address] = (SSPStep(kind: .passkeyEntry, frame: frame.number), nil) }
        case let .simplePairingComplete(status, address):
            let ssp = simplePairing.removeValue(forKey: address)
            guard status != .success,
                  let c = live.values.filter({ !$0.isLE && $0.adapter == frame.adapter && $0.peerAddress == address }).min(by: { $0.index < $1.index })
            else { return }
            c.note(frame.timestamp, frame.number, .security, .simplePairingFailed(status), .init(security: .pairingFailed))
            emit(.security, .simplePairingFailed(c, frame: frame.number, time: frame.timestamp, status: status, step: ssp?.step, rejected: ssp?.rejected))
        case let .inquiryComplete(status):
            if status == .success { inquiryEnded(frame: frame) } else { controller.inquiry[frame.adapter] = nil }
        case let .hardwareError(code):
            emit(.controller, .hardwareError(adapter: frame.adapter, frame: frame.number, time: frame.timestamp, code: code))
        case .dataBufferOverflow:
            emit(.controller, .bufferOverflow(adapter: frame.adapter, frame: frame.number, time: frame.timestamp))
        case let .qualityReport(report):
            qualityReport(report, frame: frame)
        case let .ioCapabilityResponse(address, capabilities):
            guard let c = classicLink(address, frame) else { return }
            c.encryption.peerCapabilities = capabilities
            sspMethod(c, frame)
        case let .linkKeyNotification(address, keyType):
            guard let c = classicLink(address, frame) else { return }
            c.encryption.linkKey = keyType
            c.encryption.linkKeyFrame = frame.number
            c.encryption.linkKeyFromEarlier = false
            if classicPeers.count < Self.maxClassicPeers || classicPeers[address] != nil {
                classicPeers[address, default: (nil, 0)].linkKey = keyType
            }
            c.note(frame.timestamp, frame.number, .security, .linkKey(keyType), .init(security: .linkKey, linkKey: keyType))
        case let .authenticationComplete(status, handle):
            guard status != .success, let c = live[LinkKey(adapter: frame.adapter, handle: handle)] else { return }
            c.note(frame.timestamp, frame.number, .security, .authenticationFailed(status), .init(security: .authenticationFailed))
            emit(.security, .authenticationFailed(c, frame: frame.number, time: frame.timestamp, status: status))
        case let .periodicSyncLost(syncHandle):
            emit(.advertising, .periodicSyncLost(adapter: frame.adapter, frame: frame.number, time: frame.timestamp, syncHandle: syncHandle))
        case let .roleChange(status, address, role):
            // A role switch that failed (Core v5.4 Vol 4 Part E 7.7.18): the link keeps its roles.
            guard status != .success else { return }
            emit(.controller, .procedureFailed(classicLink(address, frame), adapter: frame.adapter, frame: frame.number, time: frame.timestamp,
                                               status: status, procedure: .roleSwitch(peer: address, role: role)))
        case let .synchronousConnectionComplete(status, handle, _, _):
            if status == .success { audioOpened(handle: handle, frame: frame) }
        case let .remoteExtendedFeatures(status, handle, page, features):
            guard status == .success, let c = live[LinkKey(adapter: frame.adapter, handle: handle)], !c.isLE,
                  let sc = LMPFeatures.secureConnections(page: page, features: features) else { return }
            if page == 1 { c.encryption.peerSecureConnections.host = (sc, frame.number) } else { c.encryption.peerSecureConnections.controller = (sc, frame.number) }
        case let .longTermKeyRequest(handle, _, _):
            live[LinkKey(adapter: frame.adapter, handle: handle)]?.forensics.pendingEncryption = .init(frame: frame.number, time: frame.timestamp)
        default:
            break
        }
    }

    /// The open BR/EDR link to `address` on the frame's adapter (SSP and link key events name the
    /// peer, not the handle); the oldest when several.
    func classicLink(_ address: BDAddr, _ frame: Frame) -> Connection? {
        live.values.filter { !$0.isLE && $0.adapter == frame.adapter && $0.peerAddress == address }.min { $0.index < $1.index }
    }

    /// Both IO capabilities known: the association model (Core v5.4 Vol 3 Part C 5.2.2.6) on the story.
    private func sspMethod(_ c: Connection, _ frame: Frame) {
        guard let host = c.encryption.hostCapabilities, let peer = c.encryption.peerCapabilities else { return }
        let method = SSPCapabilities.method(host, peer)
        c.encryption.method = method
        c.note(frame.timestamp, frame.number, .security,
               .classicPairingMethod(method: method, hostIO: host.io, peerIO: peer.io, mitm: host.mitm || peer.mitm, bonding: host.bonding || peer.bonding),
               .init(security: .pairingMethod, method: method))
    }

    /// Read Encryption Key Size's answer (Core v5.4 Vol 4 Part E 7.5.7): the link's key size, told
    /// with the largest an earlier connection to the same peer had when that was larger.
    private func keySizeRead(_ c: Connection, _ size: UInt8, frame: Frame) {
        c.encryption.keySizeShown(size, frame: frame.number, time: frame.timestamp)
        let earlier = c.peerAddress.flatMap { classicPeers[$0]?.keySize }.flatMap { $0 > size ? $0 : nil }
        c.note(frame.timestamp, frame.number, .security, .keySize(size, earlier: earlier), .init(security: .keySize, keySize: size))
        if !c.isLE { rememberKeySize(c, size) }
    }

    private func rememberKeySize(_ c: Connection, _ size: UInt8) {
        guard let a = c.peerAddress, classicPeers.count < Self.maxClassicPeers || classicPeers[a] != nil else { return }
        classicPeers[a, default: (nil, 0)].keySize = max(classicPeers[a]?.keySize ?? 0, size)
    }

    /// A command the controller refused, counted with its kind (`refusals`).
    private func refused(_ opcode: HCIOpcode, _ status: HCIStatus, frame: Frame) {
        let key = CommandRefusal.Key(adapter: frame.adapter, opcode: opcode, status: status)
        let mark = LinkForensics.Mark(frame: frame.number, time: frame.timestamp)
        if let i = refusalIndex[key] {
            refusals[i].count += 1
            refusals[i].last = mark
        } else if refusals.count < Self.maxRefusalKinds {
            refusalIndex[key] = refusals.count
            refusals.append(CommandRefusal(key: key, count: 1, first: mark, last: mark))
        }
    }

    /// A connectable advertising report from the peer of an open LE link on this adapter: kept as
    /// the latest, and as the first since the peer's last packet (`LinkForensics.peerAdvertised`).
    private func peerAdvertising(_ address: BDAddr, frame: Frame) {
        for c in live.values where c.isLE && c.adapter == frame.adapter && c.peerAddress == address {
            guard let up = c.lifecycle.completeTime, frame.timestamp > up else { continue }
            let mark = LinkForensics.Mark(frame: frame.number, time: frame.timestamp)
            let lastHeard = c.traffic.lastReceivedTime ?? up
            if let first = c.forensics.peerAdvertisedFirst, first.time > lastHeard {} else { c.forensics.peerAdvertisedFirst = mark }
            c.forensics.peerAdvertised = mark
        }
    }

    /// An accepted create: it becomes the pending attempt; one still pending ended without an event
    /// in the capture.
    func start(_ i: Int, slot: AttemptSlot, frame: Frame) {
        if let old = pendingAttempt[slot], old != i {
            attempts[old].outcome = .superseded
            attempts[old].endFrame = attempts[i].frame
            attempts[old].endTime = attempts[i].time
            emit(.attempt, .attemptEnded(index: old))
        }
        pendingAttempt[slot] = i
        emit(.attempt, .attemptStarted(index: i))
    }

    /// A completion or cancel with no Command Status seen (the capture missed it): the create
    /// still waiting for its status is taken as accepted.
    func promoteAwaiting(_ slot: AttemptSlot, frame: Frame) {
        if let i = awaitingStatus.removeValue(forKey: slot) { start(i, slot: slot, frame: frame) }
    }

    func connectionComplete(_ cc: ConnectionComplete, frame: Frame) {
        let slot = AttemptSlot(adapter: frame.adapter, isLE: cc.isLE)
        if cc.role != 1 || !cc.isLE { promoteAwaiting(slot, frame: frame) }
        let attemptIndex = pendingAttempt[slot]
        if cc.status != .success {
            // A failed completion ends the pending attempt (cancel → 0x02 Unknown Connection Identifier or 0x44).
            if let i = attemptIndex, cc.role != 1 {
                let cancelled = attempts[i].cancelFrame != nil && (cc.status == .unknownConnectionIdentifier || cc.status == .unknownConnectionCancelled)
                attempts[i].outcome = cancelled ? .cancelled : .failed(cc.status)
                attempts[i].endFrame = frame.number
                attempts[i].endTime = frame.timestamp
                pendingAttempt[slot] = nil
                emit(.attempt, .attemptEnded(index: i))
            }
            return
        }
        guard connections.count < Self.maxConnections else { return }
        let c = newConnection(adapter: frame.adapter, handle: cc.handle)
        c.isLE = cc.isLE
        c.role = cc.role == 0 ? .central : cc.role == 1 ? .peripheral : .unknown
        // BR/EDR's Connection Complete has no role: the host's own Create Connection to that device
        // makes it the paging device, the Central (Core v5.4 Vol 2 Part B 8.3; a later role switch is
        // not shown).
        if !cc.isLE, cc.role == nil, let i = attemptIndex, attempts[i].peerAddress == cc.peerAddress { c.role = .central }
        c.peerAddress = cc.peerAddress
        c.peerAddressType = cc.peerAddressType
        c.peerName = advertisers.name(of: cc.peerAddress)
        c.lifecycle.completeFrame = frame.number
        c.lifecycle.completeTime = frame.timestamp
        c.link.intervalUnits = cc.intervalUnits
        c.link.latency = cc.latency
        c.link.timeoutUnits = cc.timeoutUnits
        if let i = attemptIndex, cc.role != 1 || !cc.isLE {
            attempts[i].outcome = .connected(connection: c.index)
            attempts[i].endFrame = frame.number
            attempts[i].endTime = frame.timestamp
            c.lifecycle.attemptFrame = attempts[i].frame
            c.lifecycle.attemptTime = attempts[i].time
            pendingAttempt[slot] = nil
            emit(.attempt, .attemptEnded(index: i))
        }
        c.note(frame.timestamp, frame.number, .connected,
               .connected(role: c.role, peer: cc.peerAddress, peerType: cc.peerAddressType,
                          le: cc.isLE ? .init(interval: cc.intervalUnits, latency: cc.latency, timeout: cc.timeoutUnits) : nil))
        open(c, frame: frame)
        emit(.connection, .connected(c))
    }

    func open(_ c: Connection, frame: Frame) {
        let key = LinkKey(adapter: c.adapter, handle: c.handle)
        if let old = live[key] {
            // A handle reused without a Disconnection Complete in the capture.
            old.lifecycle.disconnectFrame = frame.number
            old.lifecycle.disconnectTime = frame.timestamp
            old.note(frame.timestamp, frame.number, .disconnected, .handleReused)
            old.linkEnded()
        }
        live[key] = c
        if key.adapter == 0, key.handle < 0x1000 { adapter0[Int(key.handle)] = c }
        lastLink = nil
        connections.append(c)
        if live.count > peakConnections {
            peakConnections = live.count
            peakConnectionsFrame = frame.number
        }
    }
}
