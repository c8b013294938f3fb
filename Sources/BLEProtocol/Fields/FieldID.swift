/// What a decoded field is, independent of its label. Code that acts on fields — the `packets`
/// filter, the replay comparator, the analyzer's adapter records — matches ids; the label
/// (`Field.name`) is only shown, so renaming one changes no behaviour.
///
/// Table rows name the id where it matters (`Param(.rssi, "RSSI", .signed(1, unit: "dBm"))`); a
/// connection handle (`FieldSpec.handle`), an HCI status (`FieldSpec.status`) and an LE address
/// type (`FieldSpec.addressType`) get theirs from the spec. Most fields have none (`unspecified`).
/// Encoders key parameters by id too (`HCICommandEncoding`, `HCIEventEncoding`).
public enum FieldID: UInt8, Sendable {
    case unspecified
    /// A connection handle (ACL, CIS), Core v5.4 Vol 4 Part E 5.4.2.
    case connectionHandle
    /// An HCI status, Core v5.4 Vol 1 Part F.
    case status
    /// The reason of a disconnection or refusal (an HCI error code).
    case reason
    /// The opcode a Command Complete or Command Status answers.
    case commandOpcode
    /// The LE Meta event's subevent code.
    case subevent
    /// Num_HCI_Command_Packets: the controller's command flow control.
    case numCommandPackets
    /// Received signal strength.
    case rssi
    /// A transmit power level (current, selected, minimum, maximum, per modulation).
    case txPower
    case centralClockAccuracy
    /// Connection_Interval in force (not the Min/Max a host asks for).
    case connectionInterval
    /// Connection_Interval_Min / _Max a host asks for (LE Create Connection, LE Connection Update…).
    case minConnectionInterval, maxConnectionInterval
    /// An LE address type (Peer, Own, Identity…): it says whether the address field after it is public.
    case addressType
    /// The LE address type of the other device's address: Peer_Address_Type of connection
    /// completes, LE (Extended) Create Connection and advertising parameters, and SMP Identity
    /// Address Information's AddrType (the sender's, Core v5.4 Vol 3 Part H 3.6.5). An address type
    /// too (`isAddressType`), and the one a twin standing for a recorded public address with a
    /// random static one changes.
    case peerAddressType
    /// Own_Address_Type (Core v5.4 Vol 4 Part E 7.8.5): the type of the address the controller
    /// itself uses (public, random, or a resolvable private one). An address type too (`isAddressType`).
    case ownAddressType
    /// Initiator_Filter_Policy of LE (Extended) Create Connection (Core v5.4 Vol 4 Part E 7.8.12):
    /// 1 connects to a device on the filter accept list, not to the Peer Address given.
    case initiatorFilterPolicy
    /// An address the field's definition says is random or resolvable private (so it has no vendor).
    case randomAddress
    /// The ACL header's Packet_Boundary_Flag.
    case packetBoundary
    /// Key material a host hands its controller (LE Enable Encryption, LTK Request Reply).
    case longTermKey, randomNumber, encryptedDiversifier
    /// An address of the local controller (its resolvable private address).
    case localAddress
    /// The resolvable private address a peer used, as the controller resolved it (LE Enhanced
    /// Connection Complete, Core v5.4 Vol 4 Part E 7.7.65.10): random by design (Vol 6 Part B 1.3.2.2).
    case peerResolvableAddress
    /// The L2CAP basic header's length.
    case l2capLength
    /// An attribute value (or part of one, or values), as the ATT PDU carries it.
    case attValue
    /// An error code: an ATT Error Response's, a controller's (mgmt Controller Error).
    case errorCode
    /// The opcode of the request an ATT Error Response answers.
    case attRequestOpcode
    /// Bytes left after the decoded fields of a PDU.
    case rest
    /// A monitor's New Index / Index Info record: the controller's address, name, bus, manufacturer.
    case adapterAddress, adapterName, adapterBus, manufacturer
    /// A name a device gives itself in free-length UTF-8: AD Shortened/Complete Local Name and
    /// Broadcast_Name (Core Supplement Part A 1.2), the GAP Device Name characteristic (Vol 3 Part C 12.1).
    case deviceName
    /// The AD type of an advertising data structure (Core v5.4 Vol 3 Part C 11).
    case adType
    /// A note that the bytes from here do not follow the layout (an AD structure running past the data).
    case malformed

    /// An LE address type, of either kind: it says whether the address field after it is public.
    @inlinable public var isAddressType: Bool { self == .addressType || self == .peerAddressType || self == .ownAddressType }
}
