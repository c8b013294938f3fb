/// Every rule, in report order. A rule is added by writing its detector type and listing it here.
public enum Rules {
    public struct Factory: Sendable {
        public let rule: RuleInfo
        let make: @Sendable () -> any Detector
    }

    static func entry<D: Detector>(_ type: D.Type, _ make: @escaping @Sendable () -> D) -> Factory {
        Factory(rule: D.rule, make: make)
    }

    public static let all: [Factory] = [
        entry(StuckAttempt.self) { StuckAttempt() },
        entry(CancelledAttempt.self) { CancelledAttempt() },
        entry(IdleConnection.self) { IdleConnection() },
        entry(UnresponsivePeer.self) { UnresponsivePeer() },
        entry(RejectedAttempt.self) { RejectedAttempt() },
        entry(RepeatedPageTimeouts.self) { RepeatedPageTimeouts() },
        entry(PoolFull.self) { PoolFull() },
        entry(AttemptRefused.self) { AttemptRefused() },
        entry(ConcurrentConnections.self) { ConcurrentConnections() },
        entry(SkippedReady.self) { SkippedReady() },
        entry(CreditsExhausted.self) { CreditsExhausted() },
        entry(CreditsLost.self) { CreditsLost() },
        entry(SubscriptionFailed.self) { SubscriptionFailed() },
        entry(SubscriptionUnanswered.self) { SubscriptionUnanswered() },
        entry(SubscriptionNoNotifyProperty.self) { SubscriptionNoNotifyProperty() },
        entry(SubscriptionSilent.self) { SubscriptionSilent() },
        entry(UnsubscribedNotification.self) { UnsubscribedNotification() },
        entry(TruncatedRead.self) { TruncatedRead() },
        entry(TruncatedNotification.self) { TruncatedNotification() },
        entry(WriteTooLong.self) { WriteTooLong() },
        entry(LateMTUExchange.self) { LateMTUExchange() },
        entry(CaptureTruncatedValues.self) { CaptureTruncatedValues() },
        entry(ATTTimeout.self) { ATTTimeout() },
        entry(ATTUnanswered.self) { ATTUnanswered() },
        entry(ATTProtocolViolation.self) { ATTProtocolViolation() },
        entry(SlowResponse.self) { SlowResponse() },
        entry(ATTServerStalled.self) { ATTServerStalled() },
        entry(ATTMalformedRequest.self) { ATTMalformedRequest() },
        entry(IndicationUnconfirmed.self) { IndicationUnconfirmed() },
        entry(ATTErrors.self) { ATTErrors() },
        entry(StaleCache.self) { StaleCache() },
        entry(PairingFailed.self) { PairingFailed() },
        entry(PairingTimeout.self) { PairingTimeout() },
        entry(LegacyPairing.self) { LegacyPairing() },
        entry(JustWorksMITM.self) { JustWorksMITM() },
        entry(KeySizeDowngrade.self) { KeySizeDowngrade() },
        entry(SecureConnectionsDowngrade.self) { SecureConnectionsDowngrade() },
        entry(EncryptionFailed.self) { EncryptionFailed() },
        entry(AuthenticationFailed.self) { AuthenticationFailed() },
        entry(RepeatedPairing.self) { RepeatedPairing() },
        entry(InsufficientSecurity.self) { InsufficientSecurity() },
        entry(PlainAfterEncryption.self) { PlainAfterEncryption() },
        entry(AdvertisingOversize.self) { AdvertisingOversize() },
        entry(AdvertisingNotStopped.self) { AdvertisingNotStopped() },
        entry(PeriodicSyncLost.self) { PeriodicSyncLost() },
        entry(ScanResponseMissing.self) { ScanResponseMissing() },
        entry(ScanBackoffIgnored.self) { ScanBackoffIgnored() },
        entry(AdvertisingIntervalShort.self) { AdvertisingIntervalShort() },
        entry(Disconnects.self) { Disconnects() },
        entry(ParameterUpdateRefused.self) { ParameterUpdateRefused() },
        entry(CommandRefused.self) { CommandRefused() },
        entry(DisconnectSummary.self) { DisconnectSummary() },
        entry(LinkStallRule.self) { LinkStallRule() },
        entry(ProcedureFailures.self) { ProcedureFailures(instant: false) },
        entry(InstantPassed.self) { InstantPassed() },
        entry(FeatureRefused.self) { FeatureRefused() },
        entry(RoleSwitchFailed.self) { RoleSwitchFailed() },
        entry(FewChannels.self) { FewChannels() },
        entry(RetransmissionBurst.self) { RetransmissionBurst() },
        entry(ParameterRequestRefused.self) { ParameterRequestRefused() },
        entry(ChannelRefused.self) { ChannelRefused() },
        entry(CommandRejected.self) { CommandRejected() },
        entry(CreditWait.self) { CreditWait() },
        entry(CommandTimeout.self) { CommandTimeout() },
        entry(ConfigRefused.self) { ConfigRefused() },
        entry(HardwareError.self) { HardwareError() },
        entry(BufferOverflow.self) { BufferOverflow() },
        entry(ControllerRestarted.self) { ControllerRestarted() },
        entry(ScanContention.self) { ScanContention() },
        entry(InquiryContention.self) { InquiryContention() },
        entry(AudioContention.self) { AudioContention() },
        entry(QualityReports.self) { QualityReports() },
        entry(WriteWithResponse.self) { WriteWithResponse() },
        entry(SmallMTU.self) { SmallMTU() },
        entry(SmallDataLength.self) { SmallDataLength() },
    ]

    public static var infos: [RuleInfo] { all.map(\.rule) }

    private static let actors: [String: Actor] = Dictionary(uniqueKeysWithValues: all.map { ($0.rule.id, $0.rule.actor) })
    /// The actor a rule names unless a finding says otherwise.
    static func defaultActor(_ id: String) -> Actor { actors[id] ?? .none }
}
