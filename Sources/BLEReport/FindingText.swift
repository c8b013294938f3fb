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
