extension SMP {
    /// The association model two Pairing Request/Response PDUs select (Core v5.4 Vol 3 Part H 2.3.5.1,
    /// Tables 2.6–2.8).
    public enum PairingMethod: String, Sendable, CaseIterable {
        case justWorks = "Just Works"
        case numericComparison = "Numeric Comparison"
        case passkeyEntry = "Passkey Entry"
        case outOfBand = "Out of Band"

        /// Legacy pairing: OOB when both sides have OOB data; LE Secure Connections: when either has.
        /// Then Just Works unless one side asked for MITM, else the IO capability matrix (Table 2.8).
        public static func select(initiator i: PairingParameters, responder r: PairingParameters) -> PairingMethod {
            let sc = i.authReq.contains(.secureConnections) && r.authReq.contains(.secureConnections)
            if sc ? (i.oobDataPresent || r.oobDataPresent) : (i.oobDataPresent && r.oobDataPresent) { return .outOfBand }
            guard i.authReq.contains(.mitm) || r.authReq.contains(.mitm) else { return .justWorks }
            return matrix(initiator: i.ioCapability, responder: r.ioCapability, secureConnections: sc)
        }

        /// Table 2.8: rows are the responder's IO capability, columns the initiator's.
        static func matrix(initiator: IOCapability, responder: IOCapability, secureConnections sc: Bool) -> PairingMethod {
            if initiator == .noInputNoOutput || responder == .noInputNoOutput { return .justWorks }
            let comparison: PairingMethod = sc ? .numericComparison : .passkeyEntry
            switch (responder, initiator) {
            case (.displayOnly, .displayOnly), (.displayOnly, .displayYesNo), (.displayYesNo, .displayOnly):
                return .justWorks
            case (.displayYesNo, .displayYesNo):
                return sc ? .numericComparison : .justWorks
            case (.displayYesNo, .keyboardDisplay), (.keyboardDisplay, .displayYesNo), (.keyboardDisplay, .keyboardDisplay):
                return comparison
            default:
                // Any side with a keyboard facing a display, or two keyboards: Passkey Entry.
                return .passkeyEntry
            }
        }
    }
}
