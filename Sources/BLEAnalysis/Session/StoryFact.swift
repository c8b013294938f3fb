import BLEProtocol

/// What one line of a connection's story says, as facts: the model records them as they happen,
/// BLEReport words them (`StoryText`), so a renderer never parses a sentence and a sentence is
/// changed in one place. Attribute names are the model's at that frame (`Connection.attributeName`:
/// what discovery had shown by then), kept as the name a person read then.
/// `said` is for lines made elsewhere than the model (the report's merged summaries, tests).
public enum StoryFact: Sendable, Equatable {
    /// A line worded where it was made.
    case said(String)

    // Connections (HCI, Core v5.4 Vol 4 Part E 7.7.3, 7.7.5, 7.7.65.1; inferred sessions).
    /// (LE) Connection Complete: the host's role, the peer and, on LE, the parameters.
    case connected(role: Connection.Role, peer: BDAddr, peerType: LEAddressType?, le: LinkParameters?)
    /// ACL traffic on a handle the capture never saw set up (it began mid-connection).
    case trafficWithoutSetUp(handle: UInt16)
    /// A session inferred on a reused handle with no HCI events: the old one ends, a new one begins.
    case sessionEnds(handle: UInt16, why: String)
    case sessionBegins(handle: UInt16, why: String)
    /// Disconnection Complete; `byHost`: the host had sent Disconnect.
    case disconnected(reason: HCIStatus, byHost: Bool)
    case closedByReset
    /// A new Connection Complete on a handle still open here.
    case handleReused

    // Link parameters (LE Connection Update Complete 7.7.65.3, Data Length Change 7.7.65.7, PHY Update 7.7.65.12).
    case parameters(LinkParameters)
    /// The controller refused LE Connection Update in its Command Status.
    case connectionUpdateRefused(HCIStatus)
    /// LE Connection Update Complete with an error.
    case connectionUpdateFailed(HCIStatus)
    case dataLength(tx: UInt16, rx: UInt16)
    case phy(tx: UInt8, rx: UInt8)

    // L2CAP signalling (Vol 3 Part A 4).
    /// Connection Parameter Update Request (4.20).
    case parametersRequested(byHost: Bool, intervalMin: UInt16, intervalMax: UInt16, latency: UInt16, timeout: UInt16)
    /// Connection Parameter Update Response with a non-zero result (4.21).
    case parameterUpdateRejected(byHost: Bool)
    case channelClosed(byHost: Bool, cid: UInt16)
    case creditChannelRefused(result: UInt16)
    case creditChannelOpen(spsm: UInt16, hostCID: UInt16, peerCID: UInt16, hostMTU: UInt16, peerMTU: UInt16, hostCredits: Int, peerCredits: Int)
    case attOverBREDROpen(hostCID: UInt16, peerCID: UInt16)

    // Security (SMP, Vol 3 Part H; Encryption Change 7.7.8; Simple Pairing Complete 7.7.45).
    case pairingRequested(byHost: Bool, io: SMP.IOCapability, authReq: SMP.AuthReq, keySize: UInt8)
    case securityRequested(byHost: Bool)
    case pairingMethod(secureConnections: Bool, method: SMP.PairingMethod, hostIO: SMP.IOCapability, peerIO: SMP.IOCapability,
                       keySize: UInt8, bonding: Bool)
    case pairingFailed(byHost: Bool, reason: SMPFailureReason)
    /// No SMP step for 30 s after `after` (Part H 3.4).
    case pairingTimedOut(after: SMPCode)
    case keyDistributed(SMP.KeyDistribution, byHost: Bool)
    /// Encryption Change: on or off, with the key size of v2 (0: not reported).
    case encryption(on: Bool, keySize: UInt8?)
    case encryptionFailed(HCIStatus)
    case keyRefreshFailed(HCIStatus)
    case simplePairingFailed(HCIStatus)
    // BR/EDR security (Vol 4 Part E 7.1.10–7.1.11, 7.7.6, 7.7.24, 7.7.41, 7.5.7; Vol 3 Part C 5.2.2.6).
    /// Both IO capabilities known: the Secure Simple Pairing association model they select.
    case classicPairingMethod(method: SMP.PairingMethod, hostIO: SMP.IOCapability, peerIO: SMP.IOCapability, mitm: Bool, bonding: Bool)
    /// The host's answer to Link Key Request: a stored key (bonded) or none (pairing follows).
    case storedLinkKey(found: Bool)
    /// Link Key Notification: the new link key's type.
    case linkKey(LinkKeyType)
    /// Encryption Change on a BR/EDR link: the cipher (E0 or AES-CCM) and, with v2, the key size.
    case classicEncryption(on: Bool, cipher: LinkCipher?, keySize: UInt8?)
    /// Read Encryption Key Size: the key size; `earlier` the largest size an earlier connection to the
    /// same peer had, when larger.
    case keySize(UInt8, earlier: UInt8?)
    /// The host answered User Confirmation / Passkey Request with a negative reply.
    case pairingDeclined
    case authenticationFailed(HCIStatus)

    // Others.
    /// What the LL air adapter tells of a link (its radio summary, a response it inferred).
    case air(String)
    /// A PacketLogger syslog line that names this connection.
    case log(String)

    /// Interval, latency and supervision timeout in their HCI units (1.25 ms, events, 10 ms).
    public struct LinkParameters: Sendable, Equatable {
        public var interval: UInt16, latency: UInt16, timeout: UInt16
        public init(interval: UInt16, latency: UInt16, timeout: UInt16) { (self.interval, self.latency, self.timeout) = (interval, latency, timeout) }
    }

    // ATT (Vol 3 Part F, Part G).
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
