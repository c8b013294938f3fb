import BLEBytes
import BLEProtocol

/// The recorded connection as a story: the central's L2CAP PDUs in order, each followed by what
/// the device sent until the central's next PDU (its answer first, then notifications,
/// indications, its own requests). A twin plays it forward: a live PDU equal to a recorded
/// central PDU not yet played (the first such, searching forward) advances the story there and
/// the device's part after it is sent again. Attribute values are followed along the story, so
/// a read the recording cannot answer at that point is answered with the latest value recorded
/// by then (or the first recorded, if none yet).
public struct TwinStory: Sendable {
    public struct Step: Sendable {
        /// The central's PDU (L2CAP basic header included) and its unit.
        public var unit: LinkUnit
        /// The device's PDUs after it, with their recorded timestamps (µs).
        public var answer: [(pdu: [UInt8], timestamp: Int64)]
        /// The ATT MTU in force when the central sent it (a discovery answer depends on it).
        public var mtu: Int
        public var pdu: [UInt8] { if case let .l2cap(_, p) = unit.content { return p }; return [] }
    }

    public private(set) var steps: [Step] = []
    /// The device's PDUs before the central's first one (sent when the connection opens).
    public var opening: [(pdu: [UInt8], timestamp: Int64)] { openings.first ?? [] }
    /// Per recorded connection of the device (in order): the device's PDUs before the central's
    /// first one on it, and the index of that connection's first step.
    public private(set) var openings: [[(pdu: [UInt8], timestamp: Int64)]] = [[]]
    public private(set) var connectionStarts: [Int] = [0]
    /// Per attribute handle, the values recorded along the story: (step index, value).
    public private(set) var values: [UInt16: [(step: Int, value: [UInt8])]] = [:]
    /// The server MTU the device answered an Exchange MTU Request with.
    public private(set) var serverMTU: UInt16?
    /// The device's first Pairing Failed (SMP 0x05), if it refused pairing.
    public private(set) var pairingFailed: [UInt8]?
    public private(set) var pairingRecorded = false
    /// The device's Pairing Response and Pairing Random (SMP 0x02, 0x04) and its key distribution
    /// (0x06–0x0A, the first of each), for a live central's legacy pairing.
    public private(set) var pairingResponse: [UInt8]?
    public private(set) var pairingRandom: [UInt8]?
    public private(set) var keyDistribution: [SMPCode: [UInt8]] = [:]
    /// Every SMP PDU of the central and of the device, in order (payloads).
    public private(set) var centralSMP: [[UInt8]] = []
    public private(set) var deviceSMP: [[UInt8]] = []

    public init(units: [LinkUnit], centralIsHost: Bool) {
        self.init(connections: [units], centralIsHost: centralIsHost)
    }

    /// The story of several connections to the same device, one after the other: each
    /// connection's opening is its own (`openings`), the MTU starts at the default on each.
    public init(connections: [[LinkUnit]], centralIsHost: Bool) {
        openings = []
        connectionStarts = []
        for units in connections {
            connectionStarts.append(steps.count)
            openings.append([])
            add(units, centralIsHost: centralIsHost)
        }
        if openings.isEmpty { (openings, connectionStarts) = ([[]], [0]) }
    }

    private mutating func add(_ units: [LinkUnit], centralIsHost: Bool) {
        let first = steps.count
        var mtu = ATT.defaultLEMTU, clientMTU: Int?
        var lastRequest: [UInt8]?
        for u in units {
            guard case let .l2cap(_, pdu) = u.content, let channel = TwinPDU.channel(pdu) else { continue }
            let payload = Array(pdu.dropFirst(L2CAP.basicHeaderLength))   // the basic header was read
            let att = channel == .att ? TwinPDU.att(payload) : nil
            if u.fromHost == centralIsHost {
                steps.append(Step(unit: u, answer: [], mtu: mtu))
                switch att {
                case let .exchangeMTURequest(client)?: clientMTU = Int(client)
                case let .writeRequest(h, value)?, let .writeCommand(h, value)?: keep(h, TwinPDU.bytes(value, of: payload))
                default: break
                }
                if let op = payload.first, channel == .att, ATTOpcode(op).kind == .request { lastRequest = payload }
                if channel == .smp { pairingRecorded = true; centralSMP.append(payload) }
                continue
            }
            if steps.count == first { openings[openings.count - 1].append((pdu, u.timestamp)) } else { steps[steps.count - 1].answer.append((pdu, u.timestamp)) }
            if channel == .smp {
                deviceSMP.append(payload)
                let command = TwinPDU.smp(payload)
                switch command {
                case .pairingFailed? where pairingFailed == nil: pairingFailed = payload
                case .pairingResponse? where pairingResponse == nil: pairingResponse = payload
                case let .pairingRandom(value)? where pairingRandom == nil: pairingRandom = TwinPDU.bytes(value, of: payload)
                default:
                    if let command, command.distributedKey != nil, keyDistribution[command.code] == nil {
                        keyDistribution[command.code] = payload
                    }
                }
            }
            switch att {
            case let .exchangeMTUResponse(server)?:
                serverMTU = serverMTU ?? server
                mtu = max(ATT.defaultLEMTU, min(Int(server), clientMTU ?? Int(server)))
            case let .readResponse(value)?:
                if let r = lastRequest, case let .readRequest(h)? = TwinPDU.att(r) { keep(h, TwinPDU.bytes(value, of: payload)) }
            case let .handleValueNotification(h, value)?, let .handleValueIndication(h, value)?:
                keep(h, TwinPDU.bytes(value, of: payload))
            default: break
            }
        }
    }

    private mutating func keep(_ handle: UInt16, _ value: [UInt8]) {
        values[handle, default: []].append((max(0, steps.count - 1), value))
    }

    /// The device's recorded ATT answer to `request` on `handle` (the latest by step `step`, else
    /// the first later); nil when the recording has no such request.
    public func recordedAnswer(request: ATTOpcode, handle: UInt16, at step: Int) -> [UInt8]? {
        var latest: [UInt8]?, first: [UInt8]?
        for (k, s) in steps.enumerated() {
            guard TwinPDU.attOpcode(s.pdu) == request, Self.handle(of: Array(s.pdu.dropFirst(4))) == handle,
                  let answer = s.answer.first(where: { TwinPDU.channel($0.pdu) == .att }) else { continue }
            let att = Array(answer.pdu.dropFirst(4))
            if first == nil { first = att }
            if k <= step { latest = att } else { break }
        }
        return latest ?? first
    }

    /// The attribute handle a read or write request names (decoded by `ATT.decode`).
    static func handle(of payload: [UInt8]) -> UInt16? {
        switch TwinPDU.att(payload) {
        case let .readRequest(h)?, let .readBlobRequest(h, _)?, let .writeRequest(h, _)?, let .prepareWriteRequest(h, _, _)?: h
        default: nil
        }
    }

    /// The Error Response the device recorded for `request` on `handle`, if its answer was one.
    public func recordedError(request: ATTOpcode, handle: UInt16, at step: Int) -> [UInt8]? {
        guard let answer = recordedAnswer(request: request, handle: handle, at: step), case .errorResponse? = TwinPDU.att(answer) else { return nil }
        return answer
    }

    /// Which handle the device's Attribute Not Found answers to discovery requests name: the
    /// convention most of them follow (the starting handle on a tie or when none was recorded).
    public var notFoundHandle: AttributeTable.NotFoundHandle {
        var counts: [AttributeTable.NotFoundHandle: Int] = [:]
        for s in steps {
            guard TwinPDU.channel(s.pdu) == .att, let a = s.answer.first?.pdu, TwinPDU.channel(a) == .att,
                  case let .errorResponse(_, handle, error)? = TwinPDU.att(Array(a.dropFirst(4))), error == .attributeNotFound else { continue }
            let range: ATT.HandleRange
            switch TwinPDU.att(Array(s.pdu.dropFirst(4))) {
            case let .findInformationRequest(r)?, let .readByTypeRequest(r, _)?, let .readByGroupTypeRequest(r, _)?: range = r
            case let .findByTypeValueRequest(request)?: range = request.range
            default: continue
            }
            for rule in AttributeTable.NotFoundHandle.allCases where rule.handle(start: range.start, end: range.end) == handle { counts[rule, default: 0] += 1 }
        }
        return AttributeTable.NotFoundHandle.allCases.max { counts[$0, default: 0] < counts[$1, default: 0] || (counts[$0, default: 0] == counts[$1, default: 0] && $0 == .start) } ?? .start
    }

    /// The passkey of the first LE Secure Connections Passkey Entry pairing recorded, read back
    /// from its 20 rounds (Core v5.4 Vol 3 Part H 2.3.5.6.3): in round i the central's commitment
    /// is Cai = f4(PKax, PKbx, Nai, 0x80 | rai), rai bit i of the passkey, so trying both bits
    /// against the recorded Cai and Nai gives each. Nil when no such pairing is recorded.
    public var recordedPasskey: UInt32? {
        let central = centralSMP.map { TwinPDU.smp($0) }, device = deviceSMP.map { TwinPDU.smp($0) }
        func bytes(_ range: ByteRange, of payload: [UInt8]) -> [UInt8] { TwinPDU.bytes(range, of: payload) }
        guard let a = central.indices.first(where: { if case .pairingPublicKey = central[$0] { true } else { false } }),
              case let .pairingPublicKey(ax, _)? = central[a],
              let b = device.indices.first(where: { if case .pairingPublicKey = device[$0] { true } else { false } }),
              case let .pairingPublicKey(bx, _)? = device[b] else { return nil }
        let pkax = bytes(ax, of: centralSMP[a]), pkbx = bytes(bx, of: deviceSMP[b])
        var confirms: [[UInt8]] = [], randoms: [[UInt8]] = []
        for (k, command) in central.enumerated().dropFirst(a + 1) {
            if case let .pairingConfirm(v)? = command { confirms.append(bytes(v, of: centralSMP[k])) }
            if case let .pairingRandom(v)? = command { randoms.append(bytes(v, of: centralSMP[k])) }
        }
        guard confirms.count >= 20, randoms.count >= 20 else { return nil }
        var passkey: UInt32 = 0
        for i in 0 ..< 20 {
            if SecureConnections.f4(u: pkax, v: pkbx, x: randoms[i], z: 0x81) == confirms[i] { passkey |= 1 << UInt32(i); continue }
            guard SecureConnections.f4(u: pkax, v: pkbx, x: randoms[i], z: 0x80) == confirms[i] else { return nil }
        }
        return passkey <= 999_999 ? passkey : nil
    }

    /// The first step at or after `from` whose central PDU is `pdu`.
    public func match(_ pdu: [UInt8], from: Int, before end: Int? = nil) -> Int? {
        let end = min(end ?? steps.count, steps.count)
        guard from < end else { return nil }
        return steps[from ..< end].firstIndex { $0.pdu == pdu }
    }

    /// The end (exclusive step index) of the recorded connection `k` (0-based).
    public func connectionEnd(_ k: Int) -> Int {
        k + 1 < connectionStarts.count ? connectionStarts[k + 1] : steps.count
    }

    /// The value of `handle` as recorded by step `step`: the latest one recorded at or before
    /// it, else the first recorded later; nil when the recording never shows it.
    public func value(of handle: UInt16, at step: Int) -> [UInt8]? {
        guard let list = values[handle], let first = list.first else { return nil }
        return list.last { $0.step <= step }?.value ?? first.value
    }
}
