import BLEProtocol

/// One HCI packet as carried by H4 (Core v5.4 Vol 4 Part A 2): the packet type (the indicator
/// byte on the wire) and the HCI packet from its header on, without the indicator.
public struct H4Packet: Sendable, Equatable {
    public var type: HCIPacketType
    /// The HCI packet: header (opcode / event code / handle) and parameters.
    public var bytes: [UInt8]

    public init(_ type: HCIPacketType, _ bytes: [UInt8]) { (self.type, self.bytes) = (type, bytes) }

    /// The bytes on an H4 wire: indicator, then the packet.
    public var wire: [UInt8] { [type.rawValue] + bytes }
}

/// A live HCI link to a controller (`replay`) or to a host (`emulate`), speaking H4 framing.
///
/// Implementations: the Linux HCI user channel (`hci:N`), H4 over TCP (`tcp:HOST:PORT`), H4 over
/// a serial port or pty (`tty:PATH[,baud]`, and the `emulate` listeners). `Transports.open` and
/// `Transports.listen` pick one from a `TransportURI`. Every call is bounded in time; a closed
/// peer is `TransportError.Kind.disconnected`, never a hang or a signal.
public protocol HCITransport: AnyObject {
    /// What the transport is connected to, for messages: `tcp:127.0.0.1:6402`.
    var name: String { get }
    /// Sends one packet.
    /// - Throws: `TransportError` when the peer is gone or the write does not finish in time.
    func send(_ packet: H4Packet) throws(TransportError)
    /// Waits up to `timeout` seconds for the next packet; nil when none came in time.
    /// - Throws: `TransportError` on disconnection or a read error.
    func receive(timeout: Double) throws(TransportError) -> H4Packet?
    /// Bytes that were not H4 framing, skipped to find the next packet (for a warning).
    var framingProblems: [H4Parser.Problem] { get }
    /// Closes the link. Idempotent.
    func close()
}

/// Why a transport could not be opened or stopped working. Equatable on `kind` only, so tests can
/// match the failure without the message.
public struct TransportError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// The URI names no transport we know, or is malformed.
        case invalidURI
        /// The transport does not exist on this platform or kernel.
        case unsupported
        /// Opening, connecting, binding or accepting failed.
        case open
        /// No peer within the time allowed (connect, accept, a write).
        case timeout
        /// The peer closed the link.
        case disconnected
        /// A read or write failed.
        case io
    }

    public var kind: Kind
    public var message: String

    public init(_ kind: Kind, _ message: String) { (self.kind, self.message) = (kind, message) }

    public static func == (a: Self, b: Self) -> Bool { a.kind == b.kind }
    public var description: String { message }
}
