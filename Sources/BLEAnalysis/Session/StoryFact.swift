import BLEProtocol

/// What one line of a connection's story says, as facts: the model records them as they happen,
/// BLEReport words them (`StoryText`), so a renderer never parses a sentence and a sentence is
/// changed in one place. Attribute names are the model's at that frame (`Connection.attributeName`:
/// what discovery had shown by then), kept as the name a person read then.
///
/// The ATT layer records typed facts; the lines of the other layers (HCI, L2CAP, SMP, air, syslog)
/// are still worded where they are recorded (`said`) — docs/ARCHITECTURE.md "A connection's story".
public enum StoryFact: Sendable, Equatable {
    /// A line worded where it was recorded.
    case said(String)
    /// Exchange MTU Response (Core v5.4 Vol 3 Part F 3.4.2.2): the client's and server's Rx MTU
    /// and the ATT_MTU in force (the smaller, at least 23).
    case mtuExchanged(client: UInt16?, server: UInt16, effective: Int)
    /// An Error Response to a request (not Attribute Not Found ending a discovery); `attribute` is
    /// nil when the response names handle 0.
    case requestFailed(request: ATTOpcode, error: ATTErrorCode, attribute: String?)
    /// An Error Response to a CCCD write: `characteristic` owns the CCCD.
    case subscriptionFailed(characteristic: String, error: ATTErrorCode)
    /// A Write Response to a CCCD write: who wrote it (the peer when the host serves) and the value.
    case subscriptionAccepted(byPeer: Bool, value: UInt16, characteristic: String)
    /// A CCCD written with Write Command (no response to wait for).
    case cccdWrittenByCommand(value: UInt16, characteristic: String)
    /// A write of 1 or 2 to the handle after a value handle that then notified: a CCCD the client
    /// knew from an earlier connection (no discovery here).
    case cachedSubscription(byPeer: Bool, value: UInt16, valueHandle: UInt16, cccd: UInt16)
    /// What this connection's discovery found (told again when the pass ends: `retellDiscovery`).
    case discovery(services: Int, characteristics: Int, descriptors: Int)
    /// The first notification or indication of a value handle.
    case firstValue(indication: Bool, sent: Bool, attribute: String, length: Int)
    /// A value read with Read then Read Blob until a short part.
    case longRead(attribute: String, bytes: Int, requests: Int)
    /// Prepare Write requests then Execute Write.
    case longWrite(attribute: String, bytes: Int, requests: Int)
}
