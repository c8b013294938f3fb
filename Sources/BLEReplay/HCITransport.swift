import BLEBytes

/// A live HCI link to a controller (or, for `emulate`, to a host), speaking H4 framing.
/// Implementations: Linux HCI user channel (`hci:N`), H4 over TCP (`tcp:HOST:PORT`), H4 over a
/// serial port or pty (`tty:PATH[,baud]`). Chosen by `TransportURI`.
public protocol HCITransport: AnyObject {
    /// Sends one H4 packet (indicator byte + HCI packet).
    func send(_ packet: [UInt8]) throws
    /// Waits up to `timeout` seconds for the next H4 packet; nil on timeout.
    func receive(timeout: Double) throws -> [UInt8]?
    func close()
}
