/// HCI command parameter keys (the Core v5.4 Vol 4 Part E 7 parameter names) that code outside
/// BLEProtocol encodes by: the rows that carry them use these constants, so each key is spelled
/// once and a misspelt one does not compile (`HCICommandEncoding.command(.leCreateConnection,
/// [HCIKey.peerAddress: …])`).
public enum HCIKey {
    /// Set Event Mask (7.3.1), LE Set Event Mask (7.8.1).
    public static let eventMask = ParamKey("Event_Mask")
    public static let leEventMask = ParamKey("LE_Event_Mask")
    /// LE Set Random Address (7.8.4).
    public static let randomAddress = ParamKey("Random_Address")
    /// LE Add Device To Filter Accept List (7.8.16).
    public static let addressType = ParamKey("Address_Type")
    public static let address = ParamKey("Address")
    /// LE Create Connection (7.8.12), and the connection parameters it shares with LE Connection
    /// Update (7.8.18) and LE Remote Connection Parameter Request Reply (7.8.31).
    public static let leScanInterval = ParamKey("LE_Scan_Interval")
    public static let leScanWindow = ParamKey("LE_Scan_Window")
    public static let initiatorFilterPolicy = ParamKey("Initiator_Filter_Policy")
    public static let peerAddressType = ParamKey("Peer_Address_Type")
    public static let peerAddress = ParamKey("Peer_Address")
    public static let ownAddressType = ParamKey("Own_Address_Type")
    public static let connectionIntervalMin = ParamKey("Connection_Interval_Min")
    public static let connectionIntervalMax = ParamKey("Connection_Interval_Max")
    public static let maxLatency = ParamKey("Max_Latency")
    public static let supervisionTimeout = ParamKey("Supervision_Timeout")
    public static let minCELength = ParamKey("Min_CE_Length")
    public static let maxCELength = ParamKey("Max_CE_Length")
}
