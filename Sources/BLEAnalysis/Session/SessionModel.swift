import BLEBytes
import BLECapture
import BLEProtocol

/// The session model: connections, attempts, flow control, ATT bearers and GATT databases, built
/// from typed HCI and upper-layer decoding as frames stream by (DESIGN.md "Session").
/// Memory is bounded by live state; a closed connection keeps its summary.
public final class SessionModel {
    @exclusivity(unchecked) public private(set) var connections: [Connection] = []
    @exclusivity(unchecked) public private(set) var live: [LinkKey: Connection] = [:]
    @exclusivity(unchecked) public private(set) var attempts: [ConnectionAttempt] = []
    /// The pending attempt per adapter and transport (LE and BR/EDR attempts are independent).
    @exclusivity(unchecked) private var pendingAttempt: [AttemptSlot: Int] = [:]
    /// A create command waiting for its Command Status, per adapter and transport.
    @exclusivity(unchecked) private var awaitingStatus: [AttemptSlot: Int] = [:]
    /// The last LE Connection Update command (its Command Status names no handle).
    @exclusivity(unchecked) var lastConnectionUpdate: (handle: UInt16, frame: Int)?
    /// Whether each connection's `activity` series is kept (for the HTML report's charts; the
    /// other outputs never read it). Off by default: a capture of thousands of short links spent
    /// a sixth of its analysis filling pages for series nobody drew.
    @exclusivity(unchecked) public var recordsActivity = false

    struct AttemptSlot: Hashable {
        var adapter: UInt16
        var isLE: Bool
    }
    @exclusivity(unchecked) public private(set) var flow = FlowControl()
    @exclusivity(unchecked) public private(set) var databases: [String: GATTDatabase] = [:]
    @exclusivity(unchecked) public internal(set) var advertisers = Advertisers()
    /// The controller's version per adapter, from Read Local Version Information (the last answer).
    @exclusivity(unchecked) public private(set) var localVersions: [UInt16: LocalVersion] = [:]
    /// Checked for exclusive access in debug builds and in the fuzzer's build (`EXCLUSIVITY_CHECKED`):
    /// `l2cap()` runs inside `reassembler.push` and must never touch the reassembler (a re-entry would be
    /// an overlapping access). Unchecked in release, where the check costs ~7 % of the analysis.
    #if DEBUG || EXCLUSIVITY_CHECKED
    var reassembler = L2CAPReassembler()
    #else
    @exclusivity(unchecked) var reassembler = L2CAPReassembler()
    #endif
    /// Links whose PDU in progress had its start fragment cut by the capture (btsnooz).
    @exclusivity(unchecked) private var cutPDUs = Set<L2CAPReassembler.Key>()
    /// Maximum simultaneously open connections, and the frame where it was reached.
    @exclusivity(unchecked) public private(set) var peakConnections = 0
    @exclusivity(unchecked) public private(set) var peakConnectionsFrame = 0
    static let maxAttempts = 10_000
    /// Qualcomm controllers send their debug log as ACL on handle 0x0EDC (the header word reads 0x2EDC
    /// with its Packet Boundary flags; `QCA_DEBUG_HANDLE` in Linux's drivers/bluetooth/hci_qca.c).
    static let qualcommDebugHandle: UInt16 = 0x0EDC
    static let maxConnections = 100_000

    /// The L2CAP PDU being decoded (reassembled PDUs live outside the frame), for `withBytes`.
    @exclusivity(unchecked) var currentPDU: (buffer: UnsafeRawBufferPointer, base: Int, count: Int)?
    /// Where the bytes of the L2CAP PDU being decoded lie in the file, while it is decoded and only
    /// when it came in several ACL fragments (its reader's offsets are then not file offsets), for
    /// `pduError`. A view into the reassembler: read it while the PDU is decoded, never keep it.
    @exclusivity(unchecked) private(set) var currentFragmentMap: FragmentMap?

    /// The body of `Analyzer.consume(_:pdu:)` while that call runs (nil otherwise): each complete
    /// L2CAP PDU is handed to it, typed, before the session acts on it. Set only through
    /// `withoutActuallyEscaping`, so it never outlives the call.
    @exclusivity(unchecked) var pduBody: ((CompletedPDU) -> Void)?
    /// The handle of the last LE Enable Encryption (its Command Status names no handle).
    @exclusivity(unchecked) var lastEncryptionCommand: UInt16?
    /// The detectors fed by this model (nil: no detection, e.g. `packets`).
    /// Strong on purpose: a weak reference costs a side-table load and a slow-path release on
    /// every event (a quarter of the analysis time). The engine holds the model back
    /// (`DetectorContext.model`); `Analyzer.deinit` breaks that cycle.
    @exclusivity(unchecked) public var engine: DetectorEngine?
    /// The connection of the last ACL/NOCP lookup: consecutive packets mostly share a link, so
    /// this one-entry cache saves most dictionary lookups on the hot path.
    @exclusivity(unchecked) private var lastLink: (key: LinkKey, connection: Connection)?
    /// `live` of adapter 0 (nearly every capture) indexed by the 12-bit handle: links interleave,
    /// so the one-entry cache misses on most ACL packets of a busy capture.
    @exclusivity(unchecked) private var adapter0 = [Connection?](repeating: nil, count: 0x1000)

    /// Emits an event when some detector wants its kind (the event is not built otherwise).
    @inline(__always)
    func emit(_ kind: SessionEvent.Kind, _ event: @autoclosure () -> SessionEvent) {
        if let engine, engine.wants(kind) { engine.emit(kind, event()) }
    }

    /// ATT PDUs per opcode (a reassembled PDU counts once).
    @exclusivity(unchecked) public internal(set) var attOpcodes = [Int](repeating: 0, count: 256)

    init() {}

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
        case let .enableEncryption(handle, _):
            lastEncryptionCommand = handle
        case let .disconnect(handle, reason):
            live[LinkKey(adapter: frame.adapter, handle: handle)]?.localDisconnectReason = reason
        case .reset:
            // HCI_Reset ends the links of the controller it was sent to, not those of other adapters
            // in the same (monitor) capture.
            for (key, c) in live where key.adapter == frame.adapter {
                c.disconnectFrame = frame.number
                c.disconnectTime = frame.timestamp
                c.note(frame.timestamp, frame.number, .disconnected, "closed by HCI Reset")
                _ = flow.dropLink(c)
                c.unacknowledged.removeAll()
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
        switch event {
        case let .connectionComplete(cc):
            connectionComplete(cc, frame: frame)
        case let .disconnectionComplete(status, handle, reason):
            guard status == .success else { return }
            let key = LinkKey(adapter: frame.adapter, handle: handle)
            guard let c = live.removeValue(forKey: key) else { return }
            if key.adapter == 0, key.handle < 0x1000 { adapter0[Int(key.handle)] = nil }
            lastLink = nil
            c.disconnectFrame = frame.number
            c.disconnectTime = frame.timestamp
            c.disconnectReason = reason
            let who = c.localDisconnectReason != nil ? "host" : "peer or controller"
            c.note(frame.timestamp, frame.number, .disconnected, "disconnected: \(reason.name) (0x\(Hex.pad(reason.rawValue, 2))), initiated by \(who)",
                   .init(reason: reason.rawValue))
            emit(.connection, .disconnected(c, unacknowledged: c.unacknowledged.all))
            c.unacknowledged.removeAll()
            _ = flow.dropLink(c)
            reassembler.reset(adapter: frame.adapter, handle: handle)
        case let .commandStatus(status, _, opcode):
            if opcode == .leEnableEncryption, status != .success {
                // The encryption attempt was refused; the connection is the one the command named.
                if let c = lastEncryptionCommand.flatMap({ live[LinkKey(adapter: frame.adapter, handle: $0)] }) {
                    c.encryptionFailures += 1
                    emit(.security, .encryptionChanged(c, frame: frame.number, time: frame.timestamp, status: status, enabled: false))
                }
                return
            }
            if opcode == .leConnectionUpdate, let update = lastConnectionUpdate {
                lastConnectionUpdate = nil
                if status != .success, let c = live[LinkKey(adapter: frame.adapter, handle: update.handle)] {
                    c.note(frame.timestamp, frame.number, .parameters, "connection update refused by the controller: \(status.name) (0x\(Hex.pad(status.rawValue, 2)))")
                    emit(.link, .parameterUpdateRefused(c, commandFrame: update.frame, frame: frame.number, time: frame.timestamp, status: status))
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
            guard cc.status == .success || cc.status == nil else { return }
            var r = ByteReader(frame.payload, base: frame.payloadOffset)
            let start = cc.returnParameters.offset - frame.payloadOffset
            guard start >= 0, start <= frame.payload.count else { return }
            r = ByteReader(UnsafeRawBufferPointer(rebasing: frame.payload[start...]), base: cc.returnParameters.offset)
            if cc.opcode == .readLocalVersionInformation {
                if let v = try? LocalVersion.decode(&r) { localVersions[frame.adapter] = v }
                return
            }
            if let size = try? BufferSize.decode(cc.opcode, &r) {
                if cc.opcode == .readBufferSize { flow.aclBuffers = size } else { flow.leBuffers = size }
            }
        case let .numberOfCompletedPackets(pairs):
            pairs.forEach(in: frame.payload, base: frame.payloadOffset) { handle, count in
                guard let c = liveConnection(LinkKey(adapter: frame.adapter, handle: handle)) else { return }
                let n = flow.completed(c, count: Int(count))
                if n > 0 { c.unacknowledged.removeFirst(n); c.packetsCompleted += n }
                emit(.credits, .creditsReturned(c, frame: frame.number, time: frame.timestamp, returned: n, inUseAfter: flow.inUse(isLE: c.isLE)))
            }
        case let .encryptionChange(status, handle, enabled, keySize):
            guard let c = live[LinkKey(adapter: frame.adapter, handle: handle)] else { return }
            emit(.security, .encryptionChanged(c, frame: frame.number, time: frame.timestamp, status: status, enabled: enabled))
            if status == .success {
                c.encrypted = enabled
                if enabled { c.everEncrypted = true }
                c.note(frame.timestamp, frame.number, .security, "encryption \(enabled ? "on" : "off")" + (keySize.map { ", key size \($0)" } ?? ""),
                       .init(security: enabled ? .encryptionOn : .encryptionOff))
            } else {
                c.encryptionFailures += 1
                c.note(frame.timestamp, frame.number, .security, "encryption failed: \(status.name) (0x\(Hex.pad(status.rawValue, 2)))",
                       .init(security: .encryptionFailed))
            }
        case let .encryptionKeyRefreshComplete(status, handle):
            guard status != .success, let c = live[LinkKey(adapter: frame.adapter, handle: handle)] else { return }
            c.encryptionFailures += 1
            emit(.security, .encryptionChanged(c, frame: frame.number, time: frame.timestamp, status: status, enabled: false))
            c.note(frame.timestamp, frame.number, .security, "encryption key refresh failed: \(status.name)",
                   .init(security: .keyRefreshFailed))
        case let .connectionUpdateComplete(status, handle, interval, latency, timeout):
            guard status == .success, let c = live[LinkKey(adapter: frame.adapter, handle: handle)] else { return }
            c.intervalUnits = interval
            c.latency = latency
            c.timeoutUnits = timeout
            c.parameterUpdates += 1
            c.note(frame.timestamp, frame.number, .parameters,
                   "parameters: interval \(Self.ms(interval)) ms, latency \(latency), timeout \(Int(timeout) * 10) ms")
        case let .dataLengthChange(handle, tx, _, rx, _):
            guard let c = live[LinkKey(adapter: frame.adapter, handle: handle)] else { return }
            c.dataLength = (tx, rx)
            c.note(frame.timestamp, frame.number, .dataLength, "data length: TX \(tx) bytes, RX \(rx) bytes")
        case let .phyUpdateComplete(status, handle, tx, rx):
            guard status == .success, let c = live[LinkKey(adapter: frame.adapter, handle: handle)] else { return }
            c.phy = (tx, rx)
            c.note(frame.timestamp, frame.number, .phy, "PHY: TX \(HCINames.phy.name(UInt64(tx)) ?? "?"), RX \(HCINames.phy.name(UInt64(rx)) ?? "?")")
        case let .advertisingReports(reports):
            var problem: (text: String, offset: Int, address: BDAddr)? = nil
            reports.forEach(in: frame.payload, base: frame.payloadOffset) { report in
                if let p = advertisers.add(report, frame: frame), problem == nil { problem = (p.text, p.offset, report.address) }
            }
            if let problem {
                if status == .ok { status = .malformed(reason: "advertising data: " + problem.text, offset: problem.offset) }
                emit(.advertising, .advertisingReportProblem(frame: frame.number, time: frame.timestamp, problem: problem.text,
                                                             address: problem.address))
            }
        default:
            break
        }
    }

    /// An accepted create: it becomes the pending attempt; one still pending ended without an event
    /// in the capture.
    private func start(_ i: Int, slot: AttemptSlot, frame: Frame) {
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
    private func promoteAwaiting(_ slot: AttemptSlot, frame: Frame) {
        if let i = awaitingStatus.removeValue(forKey: slot) { start(i, slot: slot, frame: frame) }
    }

    static func ms(_ units: UInt16) -> String {
        let v = Int(units) * 125
        return "\(v / 100).\(v % 100 < 10 ? "0" : "")\(v % 100)"
    }

    private func connectionComplete(_ cc: ConnectionComplete, frame: Frame) {
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
        let c = Connection(index: connections.count + 1, adapter: frame.adapter, handle: cc.handle)
        c.isLE = cc.isLE
        c.role = cc.role == 0 ? .central : cc.role == 1 ? .peripheral : .unknown
        c.peerAddress = cc.peerAddress
        c.peerAddressType = cc.peerAddressType
        c.peerName = advertisers.name(of: cc.peerAddress)
        c.completeFrame = frame.number
        c.completeTime = frame.timestamp
        c.intervalUnits = cc.intervalUnits
        c.latency = cc.latency
        c.timeoutUnits = cc.timeoutUnits
        if let i = attemptIndex, cc.role != 1 || !cc.isLE {
            attempts[i].outcome = .connected(connection: c.index)
            attempts[i].endFrame = frame.number
            attempts[i].endTime = frame.timestamp
            c.attemptFrame = attempts[i].frame
            c.attemptTime = attempts[i].time
            pendingAttempt[slot] = nil
            emit(.attempt, .attemptEnded(index: i))
        }
        let peer = cc.peerAddressType.map { "\(cc.peerAddress) (\($0.describe(cc.peerAddress)))" } ?? cc.peerAddress.description
        var text = "connected as \(c.role.rawValue) to \(peer)"
        if cc.isLE { text += ", interval \(Self.ms(cc.intervalUnits)) ms, latency \(cc.latency), timeout \(Int(cc.timeoutUnits) * 10) ms" }
        c.note(frame.timestamp, frame.number, .connected, text)
        open(c, frame: frame)
        emit(.connection, .connected(c))
    }

    private func open(_ c: Connection, frame: Frame) {
        let key = LinkKey(adapter: c.adapter, handle: c.handle)
        if let old = live[key] {
            // A handle reused without a Disconnection Complete in the capture.
            old.disconnectFrame = frame.number
            old.disconnectTime = frame.timestamp
            old.note(frame.timestamp, frame.number, .disconnected, "handle reused: no Disconnection Complete in the capture")
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

    /// The open connection for an ACL packet; one is inferred when the capture began mid-connection.
    func connection(for frame: Frame, handle: UInt16) -> Connection? {
        let key = LinkKey(adapter: frame.adapter, handle: handle)
        if let c = liveConnection(key) { return c }
        guard connections.count < Self.maxConnections else { return nil }
        let c = Connection(index: connections.count + 1, adapter: frame.adapter, handle: handle)
        c.inferred = true
        c.att.mtuKnown = false
        c.note(frame.timestamp, frame.number, .connected, "traffic on handle \(handle) with no connection set-up in the capture")
        open(c, frame: frame)
        return c
    }

    /// The open connection for a link: by handle on adapter 0, else through the one-entry cache.
    @inline(__always)
    func liveConnection(_ key: LinkKey) -> Connection? {
        if key.adapter == 0, key.handle < 0x1000 { return adapter0[Int(key.handle)] }
        if let last = lastLink, last.key == key { return last.connection }
        guard let c = live[key] else { return nil }
        lastLink = (key, c)
        return c
    }

    /// The GATT database of the server on `c`: keyed by the peer address when the peer serves.
    func database(for c: Connection, serverIsHost: Bool) -> GATTDatabase {
        if let db = c.gatt(serverIsHost: serverIsHost) { return db }
        let owner: String
        if serverIsHost { owner = "local (hci\(c.adapter))" }
        else if let a = c.peerAddress { owner = a.description }
        else { owner = "connection #\(c.index) (handle \(c.handle))" }
        let db = databases[owner] ?? GATTDatabase(owner: owner)
        databases[owner] = db
        if serverIsHost { c.localGATT = db } else { c.peerGATT = db }
        return db
    }

    /// A service discovered on `c` where the server's table, as an earlier connection discovered it,
    /// has another service (another UUID or range at that handle): the server changed its table
    /// between connections (a device rebooting into its bootloader for a firmware update, a new
    /// firmware). The rest of this connection's discovery goes to a new version of the table, so
    /// `gatt` shows both and names stay right on each connection.
    func tableChanged(_ db: GATTDatabase, _ c: Connection, serverIsHost: Bool, handle: UInt16, end: UInt16,
                      uuid: BluetoothUUID) -> GATTDatabase {
        guard let old = db.services[handle], old.uuid != uuid || old.endHandle != end,
              let builtBy = db.builtBy, builtBy != c.index else {
            if db.builtBy == nil { db.builtBy = c.index }
            return db
        }
        let owner = db.owner.split(separator: " ").first.map(String.init) ?? db.owner
        // A table seen before (the device went back to its bootloader, or back to its application).
        let versions = databases.values.filter { $0.owner == owner || $0.owner.hasPrefix(owner + " (table ") }
        if let seen = versions.first(where: { $0.services[handle].map { $0.uuid == uuid && $0.endHandle == end } ?? false }) {
            if serverIsHost { c.localGATT = seen } else { c.peerGATT = seen }
            return seen
        }
        let version = (versions.map(\.version).max() ?? db.version) + 1
        let fresh = GATTDatabase(owner: "\(owner) (table \(version), from connection \(c.index))")
        fresh.version = version
        fresh.builtBy = c.index
        databases[fresh.owner] = fresh
        if serverIsHost { c.localGATT = fresh } else { c.peerGATT = fresh }
        return fresh
    }

    /// Names learnt after a connection opened (advertising heard later, GAP Device Name read):
    /// called once when the pass ends.
    func resolvePeerNames() {
        let deviceName = BluetoothUUID(uuid16: 0x2A00)
        for c in connections where c.peerName == nil {
            if let a = c.peerAddress, let n = advertisers.name(of: a) { c.peerName = n; continue }
            if let db = c.peerGATT, let ch = db.characteristics.values.first(where: { $0.uuid == deviceName }),
               let bytes = db.values[ch.valueHandle], !bytes.isEmpty {
                c.peerName = String(decoding: bytes, as: UTF8.self)
            }
        }
    }

    // MARK: ACL

    func acl(_ frame: Frame, status: inout FrameStatus) {
        var r = ByteReader(frame.payload, base: frame.payloadOffset)
        guard let word = try? r.u16le("Handle"), let dlen = try? r.u16le("Length") else { return }
        let header = ACLHeader(word: word, length: dlen)
        // Connection handles are 0x0000–0x0EFF (Core v5.4 Vol 4 Part E 5.4.2); controllers put debug
        // logs on reserved ones (Qualcomm 0x2EDC, QCA_DEBUG_HANDLE in Linux's hci_qca.c): not a link.
        guard header.handle <= 0x0EFF, header.handle != Self.qualcommDebugHandle else { return }
        guard let c = connection(for: frame, handle: header.handle) else { return }
        let sent = frame.direction != .received
        if sent {
            c.aclSent += 1
            c.bytesSent += Int(dlen)
            c.lastSentFrame = frame.number
            c.lastSentTime = frame.timestamp
            let before = flow.inUse(isLE: c.isLE)
            flow.sent(c)
            if recordsActivity {
                c.activity.capacity = flow.capacity(isLE: c.isLE)
                c.activity.record(frame.timestamp) { b in
                    b.aclSent += 1
                    b.bytesSent += Int(dlen)
                    b.maxBuffersInUse = max(b.maxBuffersInUse, before + 1)
                }
            }
            c.unacknowledged.append(SentPacket(frame: frame.number, time: frame.timestamp))
            emit(.aclSent, .aclSent(c, frame: frame.number, time: frame.timestamp, inUseBefore: before, capacity: flow.capacity(isLE: c.isLE)))
        } else {
            c.aclReceived += 1
            c.bytesReceived += Int(dlen)
            c.lastReceivedFrame = frame.number
            c.lastReceivedTime = frame.timestamp
            if recordsActivity {
                c.activity.record(frame.timestamp) { b in
                    b.aclReceived += 1
                    b.bytesReceived += Int(dlen)
                }
            }
            emit(.aclReceived, .aclReceived(c, frame: frame.number, time: frame.timestamp))
        }
        if c.firstDataTime == nil { c.firstDataTime = frame.timestamp }
        c.lastDataTime = frame.timestamp
        let linkKey = L2CAPReassembler.Key(adapter: frame.adapter, handle: header.handle, received: !sent)
        if frame.isCaptureTruncated {
            // Cut by the capture: upper layers are not decodable. Its continuation fragments (btsnooz keeps
            // 14 bytes of each fragment, so short ones arrive whole) belong to a cut PDU: not orphans.
            if header.isStart {
                reassembler.reset(adapter: frame.adapter, handle: header.handle)
                cutPDUs.insert(linkKey)
            }
            // An ATT start fragment is noted for the MTU rules.
            if header.isStart, r.remaining >= 5, r.bytes[r.position + 2] == 0x04, r.bytes[r.position + 3] == 0 {
                let opcode = ATTOpcode(r.bytes[r.position + 4])
                attOpcodes[Int(opcode.rawValue)] &+= 1
                var handle: UInt16? = nil
                if r.remaining >= 7, opcode != .errorResponse {
                    handle = UInt16(r.bytes[r.position + 5]) | UInt16(r.bytes[r.position + 6]) << 8
                }
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
        let problem = reassembler.push(linkKey, isStart: header.isStart, data: data, frame: frame.number) { pdu, origin in
            self.l2cap(&pdu, c, frame: frame, sent: sent, origin: origin, status: &status)
        }
        if let problem, status == .ok {
            if case .orphanContinuation = problem, c.inferred, c.aclSent + c.aclReceived <= 2 {
                return   // the capture began in the middle of a PDU: not the stack's fault
            }
            status = .malformed(reason: problem.description, offset: frame.payloadOffset)
        }
    }

    private func l2cap(_ pdu: inout ByteReader, _ c: Connection, frame: Frame, sent: Bool,
                       origin: L2CAPReassembler.Origin, status: inout FrameStatus) {
        if origin.map.isFragmented { currentFragmentMap = origin.map }
        defer { if currentFragmentMap != nil { currentFragmentMap = nil } }
        if let body = pduBody {
            body(CompletedPDU(connection: c, received: !sent, bytes: pdu, map: origin.map, firstFrame: origin.firstFrame))
        }
        currentPDU = (pdu.remainingBytes, pdu.absoluteOffset, pdu.remaining)
        defer { currentPDU = nil }
        guard let length = try? pdu.u16le("Length"), let cid = try? pdu.u16le("Channel ID") else { return }
        var payload = pdu.rest()
        if Int(length) != payload.remaining, status == .ok {
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
            do {
                let att = try ATT.decode(&payload)
                self.att(att, c, frame: frame, sent: sent, pduFrame: origin.firstFrame)
            } catch {
                if status == .ok { status = .decode(pduError(error)) }
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
