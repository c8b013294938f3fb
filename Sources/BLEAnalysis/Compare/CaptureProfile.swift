import BLEBytes
import BLEProtocol

/// What `diff` compares of one analysed capture: its peers (connections grouped by device), each
/// connection's set-up, parameters, traffic and answer times, the peer's GATT table, and the
/// findings. Built once from the model when the pass has ended (`Analyzer.finish`); holds values
/// and frame numbers, not the model.
public struct CaptureProfile: Sendable {
    /// A value as the capture showed it, with the frame that shows it (nil when none does).
    public struct Seen<Value: Sendable & Equatable>: Sendable, Equatable {
        public var value: Value
        public var frame: Int?
        public init(_ value: Value, frame: Int?) { (self.value, self.frame) = (value, frame) }
    }

    public struct Peer: Sendable {
        /// Advertised or GAP name.
        public var name: String?
        public var address: BDAddr?
        public var addressType: LEAddressType?
        /// From Identity Address Information (pairing): stable behind rotating private addresses.
        public var identityAddress: BDAddr?
        /// Company identifiers of its manufacturer data (advertising).
        public var companies: [UInt16]
        public var gatt: GATTTable?
        public var connections: [ConnectionProfile]

        /// How reports name the peer: its name, else its identity address, else its address; the
        /// connections whose peer the capture never showed (no set-up, no name) are one "unidentified peer".
        public var label: String {
            name ?? identityAddress?.description ?? address?.description ?? "unidentified peer"
        }

        /// An address that names the device whatever the capture: public or random static (Core v5.4
        /// Vol 6 Part B 1.3.2.1: the two top bits 0b11), never a private one that rotates.
        public var stableAddress: BDAddr? {
            guard let address else { return nil }
            guard let type = addressType, type.isRandom else { return address }
            return address.randomSubtype == .staticRandom ? address : nil
        }
    }

    /// One connection as `diff` reads it.
    public struct ConnectionProfile: Sendable {
        public var index: Int
        public var handle: UInt16
        public var role: Connection.Role
        public var connectedFrame: Int?
        /// Micros from the connection's start to each milestone, with the milestone's frame.
        public var toConnect: Seen<Int64>?
        public var toDiscover: Seen<Int64>?
        public var toSubscribe: Seen<Int64>?
        public var toEncrypt: Seen<Int64>?
        /// The ATT_MTU in force (the last exchange), else nil (the default 23 applies).
        public var mtu: Seen<Int>?
        /// Interval (1.25 ms units), latency (events), supervision timeout (10 ms units): at the
        /// connection's set-up and in force at its end.
        public var parameters: Seen<StoryFact.LinkParameters>?
        public var finalParameters: Seen<StoryFact.LinkParameters>?
        public var phy: Seen<Int>?
        public var dataLength: Seen<Int>?
        public var pairing: Seen<SMP.PairingMethod>?
        public var secureConnections: Bool?
        public var keySize: Seen<Int>?
        public var disconnect: Seen<HCIStatus>?
        /// Application data per direction (LinkBudget).
        public var sent: TransferDirection
        public var received: TransferDirection
        /// Answer times of the host's requests (reads, writes) and of the peer's.
        public var hostReads: LatencyDistribution
        public var hostWrites: LatencyDistribution
        public var peerReads: LatencyDistribution
        public var peerWrites: LatencyDistribution
    }

    /// A GATT server's table by UUIDs (handles move between firmware builds; UUIDs say what it is).
    public struct GATTTable: Sendable, Equatable {
        public struct Characteristic: Sendable, Equatable {
            public var uuid: BluetoothUUID
            public var properties: UInt8
            public var descriptors: [BluetoothUUID]
            public var frame: Int
        }
        public struct Service: Sendable, Equatable {
            public var uuid: BluetoothUUID
            public var primary: Bool
            public var characteristics: [Characteristic]
            public var frame: Int
        }
        public var services: [Service]

        /// The services that say what the device is: all but Generic Access (0x1800) and Generic
        /// Attribute (0x1801), which every server has (Core v5.4 Vol 3 Part G 7).
        public var deviceServices: Set<BluetoothUUID> {
            Set(services.map(\.uuid).filter { $0 != BluetoothUUID(uuid16: 0x1800) && $0 != BluetoothUUID(uuid16: 0x1801) })
        }

        /// The table's shape: every service and characteristic UUID in order, for matching peers.
        public var signature: [BluetoothUUID] { services.flatMap { [$0.uuid] + $0.characteristics.map(\.uuid) } }

        /// `signature` in 8 hex digits (64-bit FNV-1a of the 128-bit UUIDs, folded to 32 bits), the
        /// name `check --baseline` gives the table: the same for every unit of a firmware, kept by
        /// `redact` (discovery is kept, even with --drop-values); nil for an empty table.
        public var fingerprint: String? {
            let uuids = signature
            guard !uuids.isEmpty else { return nil }
            var h: UInt64 = 0xcbf2_9ce4_8422_2325
            for u in uuids {
                for half in [u.high, u.low] {
                    for k in stride(from: 56, through: 0, by: -8) {
                        h = (h ^ (half >> UInt64(k) & 0xFF)) &* 0x0100_0000_01b3   // safe: wrapping is FNV's multiply
                    }
                }
            }
            return Hex.pad(UInt32(truncatingIfNeeded: h ^ h >> 32), 8)
        }

        public init(_ db: GATTDatabase) {
            let chars = db.characteristics.values.sorted { $0.declarationHandle < $1.declarationHandle }
            let descs = db.descriptors.values.sorted { $0.handle < $1.handle }
            services = db.services.values.sorted { $0.handle < $1.handle }.map { s in
                let mine = chars.filter { $0.declarationHandle > s.handle && $0.declarationHandle <= s.endHandle }
                return Service(uuid: s.uuid, primary: s.primary, characteristics: mine.enumerated().map { i, c in
                    // A characteristic's descriptors lie after its value, before the next declaration.
                    let end = i + 1 < mine.count ? mine[i + 1].declarationHandle : s.endHandle &+ 1
                    let own = descs.filter { $0.handle > c.valueHandle && $0.handle < end }.map(\.uuid)
                    return Characteristic(uuid: c.uuid, properties: c.properties, descriptors: own, frame: c.frame)
                }, frame: s.frame)
            }
        }
    }

    public var peers: [Peer]
    public var findings: [Finding]
    /// Frames in the capture.
    public var frames: Int

    /// Reads `model` after `Analyzer.finish`.
    public init(_ model: SessionModel, findings: [Finding], frames: Int) {
        self.findings = findings
        self.frames = frames
        var peers: [Peer] = []
        var byKey: [String: Int] = [:]
        for c in model.connections {
            let key = c.peerIdentityAddress?.description ?? c.peerName?.lowercased() ?? c.peerAddress?.description ?? "?"   // the capture never showed who: one peer
            let db = [c.peerGATT, c.localGATT].compactMap { $0 }.first { !$0.isEmpty }
            if let i = byKey[key] {
                peers[i].connections.append(Self.profile(c))
                if peers[i].gatt == nil, let db { peers[i].gatt = GATTTable(db) }
                continue
            }
            byKey[key] = peers.count
            let companies = c.peerAddress.map { a in model.advertisers.all.filter { $0.address == a }.flatMap(\.companies) } ?? []
            peers.append(Peer(name: c.peerName, address: c.peerAddress, addressType: c.peerAddressType, identityAddress: c.peerIdentityAddress,
                              companies: Array(Set(companies)).sorted(), gatt: db.map(GATTTable.init), connections: [Self.profile(c)]))
        }
        self.peers = peers
    }

    static func profile(_ c: Connection) -> ConnectionProfile {
        let start = c.lifecycle.attemptTime ?? c.lifecycle.completeTime
        let connected = c.lifecycle.completeTime
        func since(_ from: Int64?, _ e: TimelineEvent?) -> Seen<Int64>? {
            guard let from, let e else { return nil }
            return Seen(max(0, e.time - from), frame: e.frame)
        }
        var p = ConnectionProfile(
            index: c.index, handle: c.handle, role: c.role, connectedFrame: c.lifecycle.completeFrame,
            sent: c.transfer.sent, received: c.transfer.received,
            hostReads: c.att.requestStats.latency(clientIsHost: true, writes: false),
            hostWrites: c.att.requestStats.latency(clientIsHost: true, writes: true),
            peerReads: c.att.requestStats.latency(clientIsHost: false, writes: false),
            peerWrites: c.att.requestStats.latency(clientIsHost: false, writes: true))
        if let start, let connected, c.lifecycle.attemptTime != nil, let f = c.lifecycle.completeFrame {
            p.toConnect = Seen(max(0, connected - start), frame: f)
        }
        var last: StoryFact.LinkParameters?
        var lastFrame: Int?
        for e in c.timeline {
            switch e.fact {
            case let .connected(_, _, _, le?):
                p.parameters = Seen(le, frame: e.frame)
                last = le; lastFrame = e.frame
            case let .parameters(lp):
                last = lp; lastFrame = e.frame
            case .discovery where p.toDiscover == nil:
                p.toDiscover = since(connected, e)
            case .subscriptionAccepted where p.toSubscribe == nil, .cccdWrittenByCommand where p.toSubscribe == nil:
                p.toSubscribe = since(connected, e)
            case let .encryption(on, keySize):
                if on, p.toEncrypt == nil { p.toEncrypt = since(connected, e) }
                if on, let keySize, keySize > 0 { p.keySize = Seen(Int(keySize), frame: e.frame) }
            case let .mtuExchanged(_, _, effective):
                p.mtu = Seen(effective, frame: e.frame)
            case let .phy(tx, _):
                p.phy = Seen(Int(tx), frame: e.frame)
            case let .dataLength(tx, _):
                p.dataLength = Seen(Int(tx), frame: e.frame)
            case let .pairingMethod(sc, method, _, _, keySize, _):
                p.pairing = Seen(method, frame: e.frame)
                p.secureConnections = sc
                if p.keySize == nil { p.keySize = Seen(Int(keySize), frame: e.frame) }
            case let .disconnected(reason, _):
                p.disconnect = Seen(reason, frame: e.frame)
            default:
                break
            }
        }
        if let last { p.finalParameters = Seen(last, frame: lastFrame) }
        return p
    }
}
