import BLEAnalysis

extension Finding {
    /// The finding's sentence as every renderer prints it. A warning or error that named its peer by
    /// address alone, written before the peer's name was known (a GAP Device Name read later, a later
    /// scan response), names it as the report does at the end (`peer`); information stays as written.
    public var text: String { render(message) }

    /// The cause's sentence, its peer named as the finding's.
    public var causeText: String? { cause.map { render($0.text) } }

    private func render(_ message: FindingMessage) -> String {
        message.parts.map { part in
            switch part {
            case let .text(t): t
            case let .peer(p):
                if severity != .info, p.bareAddress, peerName != nil, let peer { peer } else { p.written }
            }
        }.joined()
    }
}

extension FindingCause {
    /// A few words for places with no room for the sentence (a story line, a summary), with the key frame.
    public var short: String {
        let key = frames.first.map { " (#\($0))" } ?? ""
        switch kind {
        case .peerReset: return "the peer reset or left: it advertised while connected" + key
        case .peerSilent: return "the peer fell silent" + key
        case .parameters: return "supervision timeout too short or just changed" + key
        case .attTimeout: return "an ATT transaction left unanswered 30 s" + key
        case .smpTimeout: return "pairing stalled 30 s" + key
        case .llProcedure: return "an LL procedure failed or was pending" + key
        case .micFailure: return "MIC failure: the keys disagree"
        case .keyMissing: return "the peer lost the bond" + key
        case .localRequest: return "the host asked for it" + key
        case .peerRequest: return "the peer asked for it"
        case .phoneSide: return "several links lost at once: the phone's side"
        case .establishment: return "the peer never answered"
        case .linkLoss: return "lost with the link" + key
        case .pairing: return "pairing outcome" + key
        case .controllerRefused: return "refused by the controller" + key
        case .radioContention: return "the host's scanning took the radio" + key
        case .linkQuality: return "the controller reported a weak link" + key
        case .none: return "no cause in the capture"
        }
    }
}

extension FindingMessage {
    /// The sentence with its peer named as the report names `c`'s peer at the end.
    public func naming(_ c: Connection) -> String {
        parts.map { part in
            switch part {
            case let .text(t): t
            case .peer: c.peerLabel
            }
        }.joined()
    }
}
