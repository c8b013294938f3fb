/// An HCI command opcode: OGF (6 bits) and OCF (10 bits), Core v5.4 Vol 4 Part E 5.4.1.
public struct HCIOpcode: RawRepresentable, Hashable, Sendable {
    public let rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }
    public init(ogf: UInt8, ocf: UInt16) { rawValue = UInt16(ogf & 0x3F) << 10 | (ocf & 0x03FF) }

    public var ogf: UInt8 { UInt8(rawValue >> 10) }
    public var ocf: UInt16 { rawValue & 0x03FF }
    /// OGF 0x3F is reserved for vendor-specific commands.
    public var isVendor: Bool { ogf == 0x3F }

    public static let disconnect = HCIOpcode(rawValue: 0x0406)
    // BR/EDR inquiry (Vol 4 Part E 7.1.1–7.1.4): the controller searches for devices, taking radio time.
    public static let inquiry = HCIOpcode(rawValue: 0x0401)
    public static let inquiryCancel = HCIOpcode(rawValue: 0x0402)
    public static let periodicInquiryMode = HCIOpcode(rawValue: 0x0403)
    public static let exitPeriodicInquiryMode = HCIOpcode(rawValue: 0x0404)
    public static let createConnection = HCIOpcode(rawValue: 0x0405)
    public static let createConnectionCancel = HCIOpcode(rawValue: 0x0408)
    public static let reset = HCIOpcode(rawValue: 0x0C03)
    public static let readLocalVersionInformation = HCIOpcode(rawValue: 0x1001)
    public static let readBufferSize = HCIOpcode(rawValue: 0x1005)
    public static let leReadBufferSize = HCIOpcode(rawValue: 0x2002)
    public static let leReadBufferSizeV2 = HCIOpcode(rawValue: 0x2060)
    public static let leSetAdvertisingData = HCIOpcode(rawValue: 0x2008)
    public static let leSetScanResponseData = HCIOpcode(rawValue: 0x2009)
    public static let leSetAdvertisingEnable = HCIOpcode(rawValue: 0x200A)
    public static let leSetExtendedAdvertisingData = HCIOpcode(rawValue: 0x2037)
    public static let leSetExtendedAdvertisingEnable = HCIOpcode(rawValue: 0x2039)
    public static let leSetScanEnable = HCIOpcode(rawValue: 0x200C)
    public static let leSetExtendedScanEnable = HCIOpcode(rawValue: 0x2042)
    public static let leCreateConnection = HCIOpcode(rawValue: 0x200D)
    public static let leCreateConnectionCancel = HCIOpcode(rawValue: 0x200E)
    public static let leExtendedCreateConnection = HCIOpcode(rawValue: 0x2043)
    public static let leExtendedCreateConnectionV2 = HCIOpcode(rawValue: 0x2085)
    public static let leConnectionUpdate = HCIOpcode(rawValue: 0x2013)
    public static let leEnableEncryption = HCIOpcode(rawValue: 0x2019)
    // BR/EDR security: link keys, Secure Simple Pairing answers the host gives (Vol 4 Part E 7.1.10–7.1.11,
    // 7.1.29–7.1.33), the key size of an encrypted link (7.5.7).
    public static let linkKeyRequestReply = HCIOpcode(rawValue: 0x040B)
    public static let linkKeyRequestNegativeReply = HCIOpcode(rawValue: 0x040C)
    public static let ioCapabilityRequestReply = HCIOpcode(rawValue: 0x042B)
    public static let userPasskeyRequestReply = HCIOpcode(rawValue: 0x042E)
    public static let readEncryptionKeySize = HCIOpcode(rawValue: 0x1408)
    public static let userConfirmationRequestReply = HCIOpcode(rawValue: 0x042C)
    public static let userConfirmationRequestNegativeReply = HCIOpcode(rawValue: 0x042D)
    public static let userPasskeyRequestNegativeReply = HCIOpcode(rawValue: 0x042F)
    // What a twin (`bleanalyze peer`) sends to set up a peripheral.
    public static let setEventMask = HCIOpcode(rawValue: 0x0C01)
    public static let readBDAddr = HCIOpcode(rawValue: 0x1009)
    public static let leSetEventMask = HCIOpcode(rawValue: 0x2001)
    public static let leSetRandomAddress = HCIOpcode(rawValue: 0x2005)
    public static let leSetAdvertisingParameters = HCIOpcode(rawValue: 0x2006)
    public static let leLongTermKeyRequestReply = HCIOpcode(rawValue: 0x201A)
    public static let leLongTermKeyRequestNegativeReply = HCIOpcode(rawValue: 0x201B)
    public static let leSetAdvertisingSetRandomAddress = HCIOpcode(rawValue: 0x2035)
    public static let leSetExtendedAdvertisingParameters = HCIOpcode(rawValue: 0x2036)
    public static let leSetExtendedScanResponseData = HCIOpcode(rawValue: 0x2038)
    // Host configuration a refusal deprives the host of (`hci.config-refused`, Vol 4 Part E 7.3, 7.8).
    public static let setEventMaskPage2 = HCIOpcode(rawValue: 0x0C63)
    public static let writeSimplePairingMode = HCIOpcode(rawValue: 0x0C56)
    public static let writeLEHostSupported = HCIOpcode(rawValue: 0x0C6D)
    public static let writeSecureConnectionsHostSupport = HCIOpcode(rawValue: 0x0C7A)
    public static let leSetHostFeature = HCIOpcode(rawValue: 0x2074)
    // Link-layer feature procedures the host starts (`link.feature-refused`, Vol 4 Part E 7.8.33, 7.8.49).
    public static let leSetDataLength = HCIOpcode(rawValue: 0x2022)
    public static let leSetPHY = HCIOpcode(rawValue: 0x2032)
    // What describes the controller rather than a session (the replay's `controller-info` rule):
    // Informational Parameters (Vol 4 Part E 7.4) and the LE reads of 7.8.
    public static let readLocalSupportedCommands = HCIOpcode(rawValue: 0x1002)
    public static let readLocalSupportedFeatures = HCIOpcode(rawValue: 0x1003)
    public static let readLocalExtendedFeatures = HCIOpcode(rawValue: 0x1004)
    public static let readLocalSupportedCodecs = HCIOpcode(rawValue: 0x100B)
    public static let readLocalSupportedCodecsV2 = HCIOpcode(rawValue: 0x100D)
    public static let leReadLocalSupportedFeatures = HCIOpcode(rawValue: 0x2003)
    public static let leReadAdvertisingChannelTXPower = HCIOpcode(rawValue: 0x2007)
    public static let leReadFilterAcceptListSize = HCIOpcode(rawValue: 0x200F)
    public static let leRand = HCIOpcode(rawValue: 0x2018)
    public static let leReadSupportedStates = HCIOpcode(rawValue: 0x201C)
    public static let leReadSuggestedDefaultDataLength = HCIOpcode(rawValue: 0x2023)
    public static let leReadResolvingListSize = HCIOpcode(rawValue: 0x202A)
    public static let leReadMaximumDataLength = HCIOpcode(rawValue: 0x202F)
    public static let leReadMaximumAdvertisingDataLength = HCIOpcode(rawValue: 0x203A)
    public static let leReadNumberOfSupportedAdvertisingSets = HCIOpcode(rawValue: 0x203B)
    public static let leReadPeriodicAdvertiserListSize = HCIOpcode(rawValue: 0x204A)
    public static let leReadTransmitPower = HCIOpcode(rawValue: 0x204B)
    public static let leReadRFPathCompensation = HCIOpcode(rawValue: 0x204C)
    // Scanning and the filter accept list (Vol 4 Part E 7.8.10, 7.8.15–7.8.17, 7.8.64), flow
    // control of the host's own buffers (7.3.40).
    public static let leSetScanParameters = HCIOpcode(rawValue: 0x200B)
    public static let leSetExtendedScanParameters = HCIOpcode(rawValue: 0x2041)
    public static let leClearFilterAcceptList = HCIOpcode(rawValue: 0x2010)
    public static let leAddDeviceToFilterAcceptList = HCIOpcode(rawValue: 0x2011)
    public static let leRemoveDeviceFromFilterAcceptList = HCIOpcode(rawValue: 0x2012)
    // Configuration no session depends on (the replay's `unneededConfiguration`): RF path
    // compensation (7.8.74–7.8.75), the LE Ping timer (7.3.93–7.3.94), channel classification (7.3.46, 7.8.19).
    public static let leWriteRFPathCompensation = HCIOpcode(rawValue: 0x204D)
    public static let readAuthenticatedPayloadTimeout = HCIOpcode(rawValue: 0x0C7B)
    public static let writeAuthenticatedPayloadTimeout = HCIOpcode(rawValue: 0x0C7C)
    public static let setAFHHostChannelClassification = HCIOpcode(rawValue: 0x0C3F)
    public static let leSetHostChannelClassification = HCIOpcode(rawValue: 0x2014)
    /// No Command Complete follows it (unless it is malformed), so it takes no command credit (7.3.40).
    public static let hostNumberOfCompletedPackets = HCIOpcode(rawValue: 0x0C35)
}

/// HCI event codes used by the analysis, Core v5.4 Vol 4 Part E 7.7.
public enum HCIEventCode {
    public static let inquiryComplete: UInt8 = 0x01
    public static let connectionComplete: UInt8 = 0x03
    public static let disconnectionComplete: UInt8 = 0x05
    public static let authenticationComplete: UInt8 = 0x06
    public static let encryptionChange: UInt8 = 0x08
    public static let commandComplete: UInt8 = 0x0E
    public static let commandStatus: UInt8 = 0x0F
    public static let hardwareError: UInt8 = 0x10
    public static let roleChange: UInt8 = 0x12
    public static let numberOfCompletedPackets: UInt8 = 0x13
    public static let linkKeyRequest: UInt8 = 0x17
    public static let readRemoteExtendedFeaturesComplete: UInt8 = 0x23
    public static let synchronousConnectionComplete: UInt8 = 0x2C
    public static let linkKeyNotification: UInt8 = 0x18
    public static let dataBufferOverflow: UInt8 = 0x1A
    public static let encryptionKeyRefreshComplete: UInt8 = 0x30
    public static let ioCapabilityResponse: UInt8 = 0x32
    public static let userConfirmationRequest: UInt8 = 0x33
    public static let userPasskeyRequest: UInt8 = 0x34
    public static let simplePairingComplete: UInt8 = 0x36
    public static let leMeta: UInt8 = 0x3E
    public static let encryptionChangeV2: UInt8 = 0x59
    public static let vendor: UInt8 = 0xFF
}

/// LE meta subevent codes, Core v5.4 Vol 4 Part E 7.7.65: the one place each code is written (the
/// `LEMetaTable` rows of these subevents use them).
public enum LESubevent {
    public static let connectionComplete: UInt8 = 0x01
    public static let advertisingReport: UInt8 = 0x02
    public static let connectionUpdateComplete: UInt8 = 0x03
    public static let readRemoteFeaturesComplete: UInt8 = 0x04
    public static let longTermKeyRequest: UInt8 = 0x05
    public static let remoteConnectionParameterRequest: UInt8 = 0x06
    public static let dataLengthChange: UInt8 = 0x07
    public static let readLocalP256PublicKeyComplete: UInt8 = 0x08
    public static let generateDHKeyComplete: UInt8 = 0x09
    public static let enhancedConnectionComplete: UInt8 = 0x0A
    public static let directedAdvertisingReport: UInt8 = 0x0B
    public static let phyUpdateComplete: UInt8 = 0x0C
    public static let extendedAdvertisingReport: UInt8 = 0x0D
    public static let periodicAdvertisingSyncLost: UInt8 = 0x10
    public static let advertisingSetTerminated: UInt8 = 0x12
    public static let channelSelectionAlgorithm: UInt8 = 0x14
    public static let enhancedConnectionCompleteV2: UInt8 = 0x29
}
