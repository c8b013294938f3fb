import BLEBytes
import BLECapture
import BLEProtocol

/// The session model: connections, attempts, flow control, ATT bearers and GATT databases, built
/// from typed HCI and upper-layer decoding as frames stream by (DESIGN.md "Session").
/// Memory is bounded by live state; a closed connection keeps its summary.
public final class SessionModel {
    /// The connections held whole, in index order: all of them, unless a long session summarised
    /// the oldest finished ones (`summarised`, `SummaryPolicy`). Look one up by index with
    /// `connection(_:)`.
    @exclusivity(unchecked) public internal(set) var connections: [Connection] = []
    /// Finished connections summarised, in index order (`ConnectionSummary.swift`).
    @exclusivity(unchecked) public internal(set) var summarised: [ConnectionSummary] = []
    /// The oldest summarised connections, past `SummaryPolicy.rows`: counted, not listed.
    @exclusivity(unchecked) public internal(set) var foldedRows = FoldedRows()
    /// Slots (`Connection.slot`) summarised connections gave back.
    @exclusivity(unchecked) var freeSlots: [Int] = []
    @exclusivity(unchecked) public internal(set) var live: [LinkKey: Connection] = [:]
    @exclusivity(unchecked) public internal(set) var attempts: [ConnectionAttempt] = []
    /// The pending attempt per adapter and transport (LE and BR/EDR attempts are independent).
    @exclusivity(unchecked) var pendingAttempt: [AttemptSlot: Int] = [:]
    /// A create command waiting for its Command Status, per adapter and transport.
    @exclusivity(unchecked) var awaitingStatus: [AttemptSlot: Int] = [:]
    /// The last LE Connection Update command (its Command Status names no handle).
    @exclusivity(unchecked) var lastConnectionUpdate: (handle: UInt16, frame: Int)?
    /// Commands the controller refused (Command Status or Command Complete with an error), counted by
    /// adapter, opcode and status, in the order first seen (bounded).
    @exclusivity(unchecked) public internal(set) var refusals: [CommandRefusal] = []
    @exclusivity(unchecked) var refusalIndex: [CommandRefusal.Key: Int] = [:]
    static let maxRefusalKinds = 256
    /// BR/EDR Secure Simple Pairing in progress, by peer: the last step asked of the host, and the
    /// frame of the host's negative reply (bounded: a few peers pair at once).
    @exclusivity(unchecked) var simplePairing: [BDAddr: (step: SSPStep?, rejected: Int?)] = [:]
    /// BR/EDR security learnt per peer on earlier connections: the last link key type and the largest
    /// key size (bounded like `simplePairing`), for a reconnection that uses the stored key.
    @exclusivity(unchecked) var classicPeers: [BDAddr: (linkKey: LinkKeyType?, keySize: UInt8)] = [:]
    static let maxClassicPeers = 256
    /// LE bonds learnt on earlier connections: the identity address of the peer a Long Term Key was
    /// used with (or distributed by) on a link where the peer sent Identity Address Information.
    /// A later LE Enable Encryption with that key is the same bonded device, whatever private
    /// address it connects from (Core v5.4 Vol 3 Part H 2.4.1, 3.6.4). Bounded like `classicPeers`.
    @exclusivity(unchecked) var bondedIdentities: [[UInt8]: BDAddr] = [:]
    /// Whether each connection's `activity` series is kept (for the HTML report's charts; the
    /// other outputs never read it). Off by default: a capture of thousands of short links spent
    /// a sixth of its analysis filling pages for series nobody drew.
    @exclusivity(unchecked) public var recordsActivity = false
    /// The connection of the last ACL packet while `recordsActivity` is on (the collector notes its
    /// time in the connection's `activity` for an HCI ACL frame, and clears it).
    @exclusivity(unchecked) var activityLink: Connection?
    /// Scanning and advertising periods, from the enables the model decodes (nil unless the HTML
    /// report's collector asked for them).
    @exclusivity(unchecked) var radio: RadioTracker?

    struct AttemptSlot: Hashable {
        var adapter: UInt16
        var isLE: Bool
    }
    @exclusivity(unchecked) public internal(set) var flow = FlowControl()
    @exclusivity(unchecked) public internal(set) var databases: [String: GATTDatabase] = [:]
    @exclusivity(unchecked) public internal(set) var advertisers = Advertisers()
    /// The controller's version per adapter, from Read Local Version Information (the last answer).
    @exclusivity(unchecked) public internal(set) var localVersions: [UInt16: LocalVersion] = [:]
    /// Links ended with 0x3E so far, per peer address (`ConnectionLifecycle.establishFailureOrdinal`).
    var failedToEstablish: [BDAddr: Int] = [:]
    /// Commands waiting for their answer, the host held off, scan enables (`SessionModel+Controller`).
    @exclusivity(unchecked) public internal(set) var controller = ControllerWatch()
    /// Checked for exclusive access in debug builds and in the fuzzer's build (`EXCLUSIVITY_CHECKED`):
    /// `l2cap()` runs inside `reassembler.push` and must never touch the reassembler (a re-entry would be
    /// an overlapping access). Unchecked in release, where the check costs ~7 % of the analysis.
    #if DEBUG || EXCLUSIVITY_CHECKED
    var reassembler = L2CAPReassembler()
    #else
    @exclusivity(unchecked) var reassembler = L2CAPReassembler()
    #endif
    /// Links whose PDU in progress had its start fragment cut by the capture (btsnooz).
    @exclusivity(unchecked) var cutPDUs = Set<L2CAPReassembler.Key>()
    /// The capture is a filtered export (only ATT, or only ACL, kept): set when the pass ends. It shows
    /// no link boundary — no connection set-up or teardown, no LL control, no empty PDU — so it cannot
    /// prove that a link stayed open, nor that two links were open together.
    @exclusivity(unchecked) public internal(set) var filteredExport: FilteredExport?
    /// Maximum simultaneously open connections, and the frame where it was reached.
    @exclusivity(unchecked) public internal(set) var peakConnections = 0
    @exclusivity(unchecked) public internal(set) var peakConnectionsFrame = 0
    static let maxAttempts = 10_000
    /// Qualcomm controllers send their debug log as ACL on handle 0x0EDC (the header word reads 0x2EDC
    /// with its Packet Boundary flags; `QCA_DEBUG_HANDLE` in Linux's drivers/bluetooth/hci_qca.c).
    static let qualcommDebugHandle = ACLHeader.qualcommDebugHandle
    static let maxConnections = 100_000

    /// The L2CAP PDU being decoded (reassembled PDUs live outside the frame), for `withBytes`.
    @exclusivity(unchecked) var currentPDU: (buffer: UnsafeRawBufferPointer, base: Int, count: Int)?
    /// The ATT PDU being decoded is malformed (its L2CAP length lies, or it could not be decoded): a
    /// request it makes is marked so (`ATTBearer.Pending.malformed`).
    @exclusivity(unchecked) var malformedATT = false
    /// Where the bytes of the L2CAP PDU being decoded lie in the file, while it is decoded and only
    /// when it came in several ACL fragments (its reader's offsets are then not file offsets), for
    /// `pduError`. A view into the reassembler: read it while the PDU is decoded, never keep it.
    @exclusivity(unchecked) var currentFragmentMap: FragmentMap?

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
    @exclusivity(unchecked) var lastLink: (key: LinkKey, connection: Connection)?
    /// `live` of adapter 0 (nearly every capture) indexed by the 12-bit handle: links interleave,
    /// so the one-entry cache misses on most ACL packets of a busy capture.
    @exclusivity(unchecked) var adapter0 = [Connection?](repeating: nil, count: 0x1000)

    /// Emits an event when some detector wants its kind (the event is not built otherwise).
    @inline(__always)
    func emit(_ kind: SessionEvent.Kind, _ event: @autoclosure () -> SessionEvent) {
        if let engine, engine.wants(kind) { engine.emit(kind, event()) }
    }

    /// ATT PDUs per opcode (a reassembled PDU counts once).
    @exclusivity(unchecked) public internal(set) var attOpcodes = [Int](repeating: 0, count: 256)

    init() {}

    /// A new connection: the next index, and a slot a summarised connection gave back (or a new one).
    func newConnection(adapter: UInt16, handle: UInt16) -> Connection {
        Connection(index: connectionCount + 1, slot: freeSlots.popLast() ?? connections.count, adapter: adapter, handle: handle)
    }

    /// The open connection for an ACL packet; one is inferred when the capture began mid-connection.
    func connection(for frame: Frame, handle: UInt16) -> Connection? {
        let key = LinkKey(adapter: frame.adapter, handle: handle)
        if let c = liveConnection(key) { return c }
        guard connections.count < Self.maxConnections else { return nil }
        let c = newConnection(adapter: frame.adapter, handle: handle)
        c.lifecycle.inferred = true
        c.att.mtuKnown = false
        c.note(frame.timestamp, frame.number, .connected, .trafficWithoutSetUp(handle: handle))
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
    /// called once when the pass ends, detectors or not, so the report, `timeline` and `gatt` name
    /// every peer alike. Each peer's table learns the connections that used it and their peer's
    /// name (when they agree on one).
    func resolvePeerNames() {
        for c in connections { name(c) }
        for i in summarised.indices where summarised[i].peerName == nil {
            if let a = summarised[i].peerAddress, let n = advertisers.name(of: a) { summarised[i].peerName = n }
        }
        // A summarised connection told its table when it was summarised (`summarise`).
        let told = Set(summarised.map(\.index))
        for db in databases.values {
            db.servedConnections.removeAll { !told.contains($0) }
            db.peerName = nil; db.peerAddress = nil
        }
        for c in connections {
            guard let db = c.peerGATT, db.servedConnections.last != c.index else { continue }
            db.servedConnections.append(c.index)
        }
        for db in databases.values where !db.servedConnections.isEmpty {
            db.servedConnections.sort()
            let peers = db.servedConnections.map { n in connection(n).map { ($0.peerName, $0.peerAddress) } ?? summary(n).map { ($0.peerName, $0.peerAddress) } ?? (nil, nil) }
            let names = Set(peers.compactMap(\.0)), addresses = Set(peers.compactMap(\.1))
            if names.count == 1 { db.peerName = names.first }
            if addresses.count == 1 { db.peerAddress = addresses.first }
        }
    }

    /// Names `c`'s peer from what the capture learnt after it opened (advertising, GAP Device Name).
    func name(_ c: Connection) {
        guard c.peerName == nil else { return }
        if let a = c.peerAddress, let n = advertisers.name(of: a) { c.peerName = n; return }
        let deviceName = BluetoothUUID(uuid16: 0x2A00)
        if let db = c.peerGATT, let ch = db.characteristics.values.first(where: { $0.uuid == deviceName }),
           let bytes = db.values[ch.valueHandle], let name = Advertisers.displayName(bytes) {
            c.peerName = name
        }
    }
}

/// What a filtered export kept (`SessionModel.filteredExport`).
public enum FilteredExport: String, Sendable {
    /// An HCI log with ACL data and no HCI command or event.
    case hciACLOnly = "hci-acl-only"
    /// An air capture with data PDUs but no advertising, no LL control PDU and no empty PDU: a sniffer
    /// records an empty PDU in nearly every connection event (Core v5.4 Vol 6 Part B 4.5.9 acknowledges
    /// each PDU, an idle side sends empty ones), so none among many data PDUs means the export dropped them.
    case airDataOnly = "air-data-only"

    /// For the report's summary: what the capture is, and what cannot be judged from it.
    public var text: String {
        switch self {
        case .hciACLOnly:
            "filtered export: only ACL data kept (no HCI commands or events): connection set-up, disconnections, "
                + "flow control and encryption are not in it, and what the export removed cannot be judged"
        case .airDataOnly:
            "filtered export: only data PDUs kept (no advertising, no LL control, no empty PDU): what the export "
                + "removed cannot be judged (not sniffer losses), nor whether a link stayed open"
        }
    }
}
