import BLEBytes

/// A keyed parameter of a decoding table row, located once from the row itself: its offset from the
/// row's first parameter byte (the sum of the fixed widths before it, `SizeRule.size`) and its width.
/// The typed decoders (`HCIEvent.decode`) read through these, so a layout is spelled only in its
/// table row (issue 26): the row gives display, JSON, encoding and typed access alike.
struct RowField: Sendable {
    let key: StaticString
    let offset: Int
    let width: Int

    /// `key` in `params`. A row without the key, or with a variable-size parameter before it, is a
    /// programming error in a static table (like a duplicate row): it traps when the layout is first
    /// used, and `TypedEventAgreementTests` uses every layout.
    init(_ params: [Param], _ key: StaticString) {
        let wanted = ParamKey(key)
        guard let field = SizeRule.fixedLayout(params).first(where: { $0.param.key == wanted }) else {
            preconditionFailure("no parameter \(key) at a fixed offset in the row")
        }
        (self.key, self.offset, self.width) = (key, field.offset, field.size)
    }

    /// `key` in `params`, for rows keyed by `ParamKey` constants (`SMP.Key`); an error names the
    /// parameter by its label. A missing key traps as above (`SMPTests` uses every SMP layout).
    init(_ params: [Param], key wanted: ParamKey) {
        guard let field = SizeRule.fixedLayout(params).first(where: { $0.param.key == wanted }) else {
            preconditionFailure("no parameter \(wanted) at a fixed offset in the row")
        }
        (self.key, self.offset, self.width) = (field.param.name, field.offset, field.size)
    }

    @inline(never)
    func truncated(_ r: ByteReader) -> DecodeError {
        // As a sequential read would report it: at the field, with what is left there.
        DecodeError(kind: .truncated(needed: width, available: max(0, r.remaining - offset)), offset: r.absoluteOffset + offset, field: key)
    }

    /// The value at the reader's cursor + `offset` (the reader does not move).
    /// - Throws: `.truncated` when the parameters stop before the field.
    func u8(_ r: ByteReader) throws(DecodeError) -> UInt8 {
        guard let v = r.peekU8(at: offset) else { throw truncated(r) }
        return v
    }

    func u16(_ r: ByteReader) throws(DecodeError) -> UInt16 {
        guard let v = r.peekU16le(at: offset) else { throw truncated(r) }
        return v
    }

    func u32(_ r: ByteReader) throws(DecodeError) -> UInt32 {
        guard let v = r.peekU32le(at: offset) else { throw truncated(r) }
        return v
    }

    func u64(_ r: ByteReader) throws(DecodeError) -> UInt64 {
        guard let v = r.peekU64le(at: offset) else { throw truncated(r) }
        return v
    }

    /// Where the field lies in the capture (key material stays a range; copy it only if you must keep it).
    func range(_ r: ByteReader) throws(DecodeError) -> ByteRange {
        guard r.remaining - offset >= width else { throw truncated(r) }
        return ByteRange(offset: r.absoluteOffset + offset, count: width)
    }

    func address(_ r: ByteReader) throws(DecodeError) -> BDAddr {
        guard let v = r.getSlice(at: r.position + offset, count: 6).flatMap({ $0.getU48le(at: 0) }) else { throw truncated(r) }
        return BDAddr(v)
    }
}

/// The LE Meta subevents the analysis types (`HCIEvent`), located in their `LEMetaTable` rows by key.
/// Offsets count from the first parameter after the subevent code.
enum LEMetaLayout {
    static func row(_ subevent: UInt8) -> [Param] { HCIDecoder.leMeta[UInt16(subevent)]?.parameters ?? [] }

    /// LE Connection Complete (7.7.65.1) and LE Enhanced Connection Complete v1/v2 (7.7.65.10): the
    /// same fields, the enhanced ones with the two resolvable private addresses before the interval.
    struct ConnectionComplete: Sendable {
        let status, handle, role, peerAddressType, peerAddress, interval, latency, timeout: RowField
        init(_ params: [Param]) {
            (status, handle, role) = (RowField(params, "Status"), RowField(params, "Connection_Handle"), RowField(params, "Role"))
            (peerAddressType, peerAddress) = (RowField(params, "Peer_Address_Type"), RowField(params, "Peer_Address"))
            (interval, latency, timeout) = (RowField(params, "Connection_Interval"), RowField(params, "Peripheral_Latency"),
                                            RowField(params, "Supervision_Timeout"))
        }
    }
    static let connectionComplete = ConnectionComplete(row(LESubevent.connectionComplete))
    static let enhancedConnectionComplete = ConnectionComplete(row(LESubevent.enhancedConnectionComplete))
    static let enhancedConnectionCompleteV2 = ConnectionComplete(row(LESubevent.enhancedConnectionCompleteV2))

    /// LE Connection Update Complete (7.7.65.3).
    struct ConnectionUpdate: Sendable {
        let status, handle, interval, latency, timeout: RowField
    }
    static let connectionUpdate: ConnectionUpdate = {
        let p = row(LESubevent.connectionUpdateComplete)
        return ConnectionUpdate(status: RowField(p, "Status"), handle: RowField(p, "Connection_Handle"), interval: RowField(p, "Connection_Interval"),
                                latency: RowField(p, "Peripheral_Latency"), timeout: RowField(p, "Supervision_Timeout"))
    }()

    /// LE Data Length Change (7.7.65.7).
    struct DataLengthChange: Sendable {
        let handle, maxTxOctets, maxTxTime, maxRxOctets, maxRxTime: RowField
    }
    static let dataLengthChange: DataLengthChange = {
        let p = row(LESubevent.dataLengthChange)
        return DataLengthChange(handle: RowField(p, "Connection_Handle"), maxTxOctets: RowField(p, "Max_TX_Octets"),
                                maxTxTime: RowField(p, "Max_TX_Time"), maxRxOctets: RowField(p, "Max_RX_Octets"),
                                maxRxTime: RowField(p, "Max_RX_Time"))
    }()

    /// LE PHY Update Complete (7.7.65.12).
    struct PHYUpdate: Sendable {
        let status, handle, txPHY, rxPHY: RowField
    }
    static let phyUpdate: PHYUpdate = {
        let p = row(LESubevent.phyUpdateComplete)
        return PHYUpdate(status: RowField(p, "Status"), handle: RowField(p, "Connection_Handle"), txPHY: RowField(p, "TX_PHY"),
                         rxPHY: RowField(p, "RX_PHY"))
    }()

    /// LE Advertising Set Terminated (7.7.65.18).
    struct AdvertisingSetTerminated: Sendable {
        let status, advertisingHandle, connectionHandle: RowField
    }
    static let advertisingSetTerminated: AdvertisingSetTerminated = {
        let p = row(LESubevent.advertisingSetTerminated)
        return AdvertisingSetTerminated(status: RowField(p, "Status"), advertisingHandle: RowField(p, "Advertising_Handle"),
                                        connectionHandle: RowField(p, "Connection_Handle"))
    }()

    /// LE Periodic Advertising Sync Lost (7.7.65.16).
    static let periodicSyncLost = RowField(row(LESubevent.periodicAdvertisingSyncLost), "Sync_Handle")

    /// LE Long Term Key Request (7.7.65.5).
    struct LongTermKeyRequest: Sendable {
        let handle, random, ediv: RowField
    }
    static let longTermKeyRequest: LongTermKeyRequest = {
        let p = row(LESubevent.longTermKeyRequest)
        return LongTermKeyRequest(handle: RowField(p, "Connection_Handle"), random: RowField(p, "Random_Number"),
                                  ediv: RowField(p, "Encrypted_Diversifier"))
    }()
}

/// The BR/EDR-and-LE events the analysis types with fixed layouts, located in their `EventTable` rows
/// by key (Command Complete/Status and Number Of Completed Packets are read as structures).
enum EventLayout {
    static func row(_ code: UInt8) -> [Param] { HCIDecoder.events[UInt16(code)]?.parameters ?? [] }

    /// Disconnection Complete (7.7.5).
    struct DisconnectionComplete: Sendable {
        let status, handle, reason: RowField
    }
    static let disconnectionComplete: DisconnectionComplete = {
        let p = row(HCIEventCode.disconnectionComplete)
        return DisconnectionComplete(status: RowField(p, "Status"), handle: RowField(p, "Connection_Handle"), reason: RowField(p, "Reason"))
    }()

    /// Encryption Change v1 (7.7.8) and v2 (7.7.8.1, with the key size).
    struct EncryptionChange: Sendable {
        let status, handle, enabled: RowField
        let keySize: RowField?
    }
    static let encryptionChange: EncryptionChange = {
        let p = row(HCIEventCode.encryptionChange)
        return EncryptionChange(status: RowField(p, "Status"), handle: RowField(p, "Connection_Handle"),
                                enabled: RowField(p, "Encryption_Enabled"), keySize: nil)
    }()
    static let encryptionChangeV2: EncryptionChange = {
        let p = row(HCIEventCode.encryptionChangeV2)
        return EncryptionChange(status: RowField(p, "Status"), handle: RowField(p, "Connection_Handle"),
                                enabled: RowField(p, "Encryption_Enabled"), keySize: RowField(p, "Encryption_Key_Size"))
    }()

    /// Encryption Key Refresh Complete (7.7.39).
    static let keyRefresh: (status: RowField, handle: RowField) = {
        let p = row(HCIEventCode.encryptionKeyRefreshComplete)
        return (RowField(p, "Status"), RowField(p, "Connection_Handle"))
    }()

    /// Read Remote Extended Features Complete (7.7.34): one page of the peer's LMP features.
    struct RemoteExtendedFeatures: Sendable {
        let status, handle, page, features: RowField
    }
    static let remoteExtendedFeatures: RemoteExtendedFeatures = {
        let p = row(HCIEventCode.readRemoteExtendedFeaturesComplete)
        return RemoteExtendedFeatures(status: RowField(p, "Status"), handle: RowField(p, "Connection_Handle"),
                                      page: RowField(p, "Page_Number"), features: RowField(p, "Extended_LMP_Features"))
    }()

    /// Synchronous Connection Complete (7.7.35): an SCO (Link_Type 0x00) or eSCO (0x02) link.
    struct SynchronousConnectionComplete: Sendable {
        let status, handle, address, linkType: RowField
    }
    static let synchronousConnectionComplete: SynchronousConnectionComplete = {
        let p = row(HCIEventCode.synchronousConnectionComplete)
        return SynchronousConnectionComplete(status: RowField(p, "Status"), handle: RowField(p, "Connection_Handle"),
                                             address: RowField(p, "BD_ADDR"), linkType: RowField(p, "Link_Type"))
    }()

    /// Hardware Error (7.7.12).
    static let hardwareCode = RowField(row(HCIEventCode.hardwareError), "Hardware_Code")
}
