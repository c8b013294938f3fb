/// A finding's sentence with the peer as a typed part: a peer's name may be learnt after the
/// finding (a GAP Device Name read later, a later scan response), so renderers write the peer as
/// the report names it at the end instead of the analysis patching the text.
///
/// Detectors write it as a string, the peer interpolated: `"The host kept sending to \(peer: c)"`.
public struct FindingMessage: Sendable, ExpressibleByStringInterpolation, CustomStringConvertible {
    public enum Part: Sendable {
        case text(String)
        /// The peer of the finding's connection as it was named when the finding was made.
        case peer(PeerMention)
    }
    /// How the peer was named when the finding was made.
    public struct PeerMention: Sendable {
        /// `Connection.peerLabel`, or the address alone.
        public var written: String
        /// Written as the address alone (the name was unknown, or not asked for): a renderer may name
        /// the peer by the label the report gives it at the end.
        public var bareAddress: Bool
    }
    public private(set) var parts: [Part]

    public init(stringLiteral value: String) { parts = [.text(value)] }
    public init(stringInterpolation: StringInterpolation) { parts = stringInterpolation.parts }
    public init(_ text: String) { parts = [.text(text)] }

    /// The sentence as written when the finding was made.
    public var description: String {
        parts.map { part in
            switch part {
            case let .text(t): t
            case let .peer(p): p.written
            }
        }.joined()
    }

    /// The peer of `c` alone, to choose between it and another actor (`sent ? "the host" : .peer(c)`).
    public static func peer(_ c: Connection) -> FindingMessage { "\(peer: c)" }

    public static func + (a: FindingMessage, b: FindingMessage) -> FindingMessage {
        var m = a
        m.parts += b.parts
        return m
    }

    public struct StringInterpolation: StringInterpolationProtocol {
        var parts: [Part] = []
        public init(literalCapacity: Int, interpolationCount: Int) {}
        public mutating func appendLiteral(_ literal: String) { appendText(literal) }
        public mutating func appendInterpolation<T>(_ value: T) { appendText("\(value)") }
        /// Strings and integers without the generic printing path (dynamic casts per value).
        public mutating func appendInterpolation(_ value: String) { appendText(value) }
        public mutating func appendInterpolation<T: BinaryInteger>(_ value: T) { appendText(String(value)) }
        /// Another message (its peer mentions kept).
        public mutating func appendInterpolation(_ message: FindingMessage) { parts += message.parts }
        /// The peer of `c`, as the report labels it (`Connection.peerLabel`).
        public mutating func appendInterpolation(peer c: Connection) {
            parts.append(.peer(PeerMention(written: c.peerLabel, bareAddress: c.peerName == nil && c.peerAddress != nil)))
        }
        /// The peer's address alone, or `fallback` when the capture does not show it.
        public mutating func appendInterpolation(peerAddress c: Connection, or fallback: String) {
            if let a = c.peerAddress {
                parts.append(.peer(PeerMention(written: a.description, bareAddress: true)))
            } else {
                appendText(fallback)
            }
        }
        mutating func appendText(_ s: String) {
            guard !s.isEmpty else { return }
            if case var .text(t)? = parts.last {
                // Taken out first so that it grows in place: `t + s` copied the sentence so far at
                // every piece (~700 instructions a piece; findings are made per connection).
                parts[parts.count - 1] = .text("")
                t += s
                parts[parts.count - 1] = .text(t)
            } else {
                parts.append(.text(s))
            }
        }
    }
}
