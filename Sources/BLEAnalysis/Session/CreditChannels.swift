import BLEBytes
import BLEProtocol

/// LE credit-based L2CAP channels of a connection (Core v5.4 Vol 3 Part A 10.1, LE Credit Based
/// Flow Control Mode): opened by LE Credit Based / Credit Based Connection Request+Response on the LE
/// signalling channel, credits granted by Flow Control Credit Indications, data in K-frames whose
/// first frame of each SDU carries the SDU length.
public struct CreditChannels: Sendable {
    public struct Channel: Sendable {
        public var spsm: UInt16
        /// The CID on which the host receives / the peer receives.
        public var hostCID: UInt16
        public var peerCID: UInt16
        public var hostMTU: UInt16
        public var peerMTU: UInt16
        /// Credits the host may still use to send, and the peer.
        public var hostCredits: Int
        public var peerCredits: Int
        public var openFrame: Int
        public var closeFrame: Int?
        public var sdusSent = 0
        public var sdusReceived = 0
        public var bytesSent = 0
        public var bytesReceived = 0
        /// K-frames sent with no credit left (a flow-control violation).
        public var sentWithoutCredit = 0
        /// SDU in progress per direction (host → peer, peer → host): bytes expected and received.
        var sduSending: (expected: Int, have: Int)?
        var sduReceiving: (expected: Int, have: Int)?
        /// Per sender (host, peer): the K-frame that spent its last credit, then the credits that came.
        var drained: [Wait.Mark?] = [nil, nil]
        var refilled: [(drained: Wait.Mark, credit: Wait.Mark)?] = [nil, nil]
    }

    /// A sender that spent its last credit (Core v5.4 Vol 3 Part A 10.1: it may send no K-frame
    /// without one) and sent its next K-frame right after the LE Flow Control Credit Indication.
    public struct Wait: Sendable {
        public struct Mark: Sendable {
            public var frame: Int
            public var time: Int64
        }
        public var spsm: UInt16
        /// The CID the sender sends to.
        public var cid: UInt16
        public var senderIsHost: Bool
        /// Its last credit spent, the credits given back, its next K-frame.
        public var drained: Mark
        public var credit: Mark
        public var resumed: Mark
        public var duration: Int64 { credit.time - drained.time }
    }
    /// A K-frame sent within this of the credits was waiting for them (µs).
    static let prompt: Int64 = 100_000

    struct PendingRequest {
        var spsm: UInt16
        var sourceCIDs: [UInt16]
        var mtu: UInt16
        var credits: UInt16
        var requesterIsHost: Bool
    }

    public private(set) var channels: [Channel] = []
    var pending: [UInt8: PendingRequest] = [:]   // by signalling identifier
    static let maxChannels = 64

    public init() {}

    func index(cid: UInt16, sent: Bool) -> Int? {
        // Data sent by the host goes to the peer's CID; data received arrives on the host's CID.
        channels.lastIndex { $0.closeFrame == nil && (sent ? $0.peerCID == cid : $0.hostCID == cid) }
    }

    /// Whether the next K-frame on `cid` in this direction starts an SDU (nil: not a known channel).
    public func startsSDU(cid: UInt16, sent: Bool) -> Bool? {
        guard let i = index(cid: cid, sent: sent) else { return nil }
        return (sent ? channels[i].sduSending : channels[i].sduReceiving) == nil
    }

    mutating func request(_ id: UInt8, spsm: UInt16, sourceCIDs: [UInt16], mtu: UInt16, credits: UInt16, sent: Bool) {
        pending[id] = PendingRequest(spsm: spsm, sourceCIDs: sourceCIDs, mtu: mtu, credits: credits, requesterIsHost: sent)
    }

    /// Returns the channels opened by a successful response.
    mutating func response(_ id: UInt8, destinationCIDs: [UInt16], mtu: UInt16, credits: UInt16, result: UInt16, frame: Int) -> [Channel] {
        guard let req = pending.removeValue(forKey: id), result == 0 else { return [] }
        var opened: [Channel] = []
        for (source, destination) in zip(req.sourceCIDs, destinationCIDs) where destination != 0 && channels.count < Self.maxChannels {
            // The requester receives on its source CID; the responder on its destination CID.
            let hostCID = req.requesterIsHost ? source : destination
            let peerCID = req.requesterIsHost ? destination : source
            let ch = Channel(spsm: req.spsm, hostCID: hostCID, peerCID: peerCID,
                             hostMTU: req.requesterIsHost ? req.mtu : mtu, peerMTU: req.requesterIsHost ? mtu : req.mtu,
                             hostCredits: Int(req.requesterIsHost ? credits : req.credits),
                             peerCredits: Int(req.requesterIsHost ? req.credits : credits), openFrame: frame)
            channels.append(ch)
            opened.append(ch)
        }
        return opened
    }

    /// A Flow Control Credit Indication: its CID is the sender's receiving CID; the other side gains credits.
    mutating func credits(cid: UInt16, credits: UInt16, sentByHost: Bool, frame: Int, time: Int64) {
        guard let i = channels.lastIndex(where: { $0.closeFrame == nil && (sentByHost ? $0.hostCID == cid : $0.peerCID == cid) }) else { return }
        if sentByHost { channels[i].peerCredits += Int(credits) } else { channels[i].hostCredits += Int(credits) }
        // The side that receives the credits is the sender that may have been waiting.
        let sender = sentByHost ? 1 : 0
        if credits > 0, let d = channels[i].drained[sender] {
            channels[i].drained[sender] = nil
            channels[i].refilled[sender] = (d, Wait.Mark(frame: frame, time: time))
        }
    }

    mutating func close(cid: UInt16, frame: Int) {
        for i in channels.indices where channels[i].closeFrame == nil && (channels[i].hostCID == cid || channels[i].peerCID == cid) {
            channels[i].closeFrame = frame
        }
    }

    /// A K-frame: spends a credit of the sender and advances SDU reassembly. Returns a wait for credits
    /// it ended (the sender's next K-frame right after them).
    mutating func kFrame(cid: UInt16, sent: Bool, payload: ByteReader, frame: Int, time: Int64) -> Wait? {
        guard let i = index(cid: cid, sent: sent) else { return nil }
        var ch = channels[i]
        let sender = sent ? 0 : 1
        var wait: Wait? = nil
        if let r = ch.refilled[sender] {
            ch.refilled[sender] = nil
            if time - r.credit.time <= Self.prompt {
                wait = Wait(spsm: ch.spsm, cid: cid, senderIsHost: sent, drained: r.drained, credit: r.credit, resumed: .init(frame: frame, time: time))
            }
        }
        if sent {
            if ch.hostCredits <= 0 { ch.sentWithoutCredit += 1 } else { ch.hostCredits -= 1 }
        } else {
            ch.peerCredits = max(0, ch.peerCredits - 1)
        }
        if (sent ? ch.hostCredits : ch.peerCredits) == 0, ch.drained[sender] == nil { ch.drained[sender] = .init(frame: frame, time: time) }
        var r = payload
        var sdu = sent ? ch.sduSending : ch.sduReceiving
        if sdu == nil, let length = try? r.u16le("L2CAP SDU Length") { sdu = (Int(length), 0) }
        if var s = sdu {
            s.have += r.remaining
            if s.have >= s.expected {
                sdu = nil
                if sent { ch.sdusSent += 1; ch.bytesSent += s.expected } else { ch.sdusReceived += 1; ch.bytesReceived += s.expected }
            } else {
                sdu = s
            }
        }
        if sent { ch.sduSending = sdu } else { ch.sduReceiving = sdu }
        channels[i] = ch
        return wait
    }
}
