/// HCI command and event parameter keys (the Core v5.4 Vol 4 Part E 7 parameter names) that code outside
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

    // Parameters that the twin (PeerSetup, PeerEngine) and the air adapter encode: advertising
    // (7.8.5-7.8.9, 7.8.53-7.8.56), Disconnect (7.1.6), LE Long Term Key Request Reply (7.8.25),
    // and the events the air adapter writes (Number Of Completed Packets 7.7.19, LE Advertising
    // Report 7.7.65.2, LE Extended Advertising Report 7.7.65.13).
    public static let advertisingChannelMap = ParamKey("Advertising_Channel_Map")
    public static let advertisingData = ParamKey("Advertising_Data")
    public static let advertisingDataLength = ParamKey("Advertising_Data_Length")
    public static let advertisingEnable = ParamKey("Advertising_Enable")
    public static let advertisingEventProperties = ParamKey("Advertising_Event_Properties")
    public static let advertisingFilterPolicy = ParamKey("Advertising_Filter_Policy")
    public static let advertisingHandle = ParamKey("Advertising_Handle")
    public static let advertisingIntervalMax = ParamKey("Advertising_Interval_Max")
    public static let advertisingIntervalMin = ParamKey("Advertising_Interval_Min")
    public static let advertisingSID = ParamKey("Advertising_SID")
    public static let advertisingTXPower = ParamKey("Advertising_TX_Power")
    public static let advertisingType = ParamKey("Advertising_Type")
    public static let connectionHandle = ParamKey("Connection_Handle")
    public static let data = ParamKey("Data")
    public static let directAddress = ParamKey("Direct_Address")
    public static let directAddressType = ParamKey("Direct_Address_Type")
    public static let duration = ParamKey("Duration")
    public static let enable = ParamKey("Enable")
    public static let eventType = ParamKey("Event_Type")
    public static let fragmentPreference = ParamKey("Fragment_Preference")
    public static let longTermKey = ParamKey("Long_Term_Key")
    public static let maxExtendedAdvertisingEvents = ParamKey("Max_Extended_Advertising_Events")
    public static let numCompletedPackets = ParamKey("Num_Completed_Packets")
    public static let numHandles = ParamKey("Num_Handles")
    public static let numReports = ParamKey("Num_Reports")
    public static let numSets = ParamKey("Num_Sets")
    public static let operation = ParamKey("Operation")
    public static let periodicAdvertisingInterval = ParamKey("Periodic_Advertising_Interval")
    public static let primaryAdvertisingChannelMap = ParamKey("Primary_Advertising_Channel_Map")
    public static let primaryAdvertisingIntervalMax = ParamKey("Primary_Advertising_Interval_Max")
    public static let primaryAdvertisingIntervalMin = ParamKey("Primary_Advertising_Interval_Min")
    public static let primaryAdvertisingPHY = ParamKey("Primary_Advertising_PHY")
    public static let primaryPHY = ParamKey("Primary_PHY")
    public static let rssi = ParamKey("RSSI")
    public static let reason = ParamKey("Reason")
    public static let scanRequestNotificationEnable = ParamKey("Scan_Request_Notification_Enable")
    public static let scanResponseData = ParamKey("Scan_Response_Data")
    public static let scanResponseDataLength = ParamKey("Scan_Response_Data_Length")
    public static let secondaryAdvertisingMaxSkip = ParamKey("Secondary_Advertising_Max_Skip")
    public static let secondaryAdvertisingPHY = ParamKey("Secondary_Advertising_PHY")
    public static let secondaryPHY = ParamKey("Secondary_PHY")
    public static let txPower = ParamKey("TX_Power")
}
