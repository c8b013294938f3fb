import BLEProtocol
import Testing

/// The association model (Core v5.4 Vol 3 Part H 2.3.5.1, Table 2.8), written out here row by row from the
/// spec's table: responder rows, initiator columns (DisplayOnly, DisplayYesNo, KeyboardOnly,
/// NoInputNoOutput, KeyboardDisplay); legacy / LE Secure Connections where they differ.
@Suite struct PairingMethodTests {
    typealias M = SMP.PairingMethod
    static let caps: [SMP.IOCapability] = [.displayOnly, .displayYesNo, .keyboardOnly, .noInputNoOutput, .keyboardDisplay]
    // J = Just Works, P = Passkey Entry, N = Numeric Comparison.
    static let legacy = ["JJPJP", "JJPJP", "PPPJP", "JJJJJ", "PPPJP"]
    static let secure = ["JJPJP", "JNPJN", "PPPJP", "JJJJJ", "PNPJN"]

    static func params(_ io: SMP.IOCapability, mitm: Bool = true, sc: Bool, oob: Bool = false) -> SMP.PairingParameters {
        var auth: SMP.AuthReq = [.bonding]
        if mitm { auth.insert(.mitm) }
        if sc { auth.insert(.secureConnections) }
        return SMP.PairingParameters(ioCapability: io, oobDataFlag: oob ? 1 : 0, authReq: auth, maxEncryptionKeySize: 16,
                                     initiatorKeyDistribution: [], responderKeyDistribution: [])
    }

    @Test(arguments: [false, true])
    func ioCapabilityMatrix(secureConnections: Bool) {
        let table = secureConnections ? Self.secure : Self.legacy
        for (r, row) in table.enumerated() {
            for (i, letter) in row.enumerated() {
                let expected: M = letter == "J" ? .justWorks : letter == "P" ? .passkeyEntry : .numericComparison
                let got = M.select(initiator: Self.params(Self.caps[i], sc: secureConnections), responder: Self.params(Self.caps[r], sc: secureConnections))
                #expect(got == expected, "responder \(Self.caps[r]) initiator \(Self.caps[i]) SC \(secureConnections): \(got)")
            }
        }
    }

    /// No MITM on either side: Just Works whatever the IO; OOB: legacy needs both flags, SC either.
    @Test func mitmAndOutOfBand() {
        #expect(M.select(initiator: Self.params(.keyboardDisplay, mitm: false, sc: false), responder: Self.params(.displayOnly, mitm: false, sc: false)) == .justWorks)
        #expect(M.select(initiator: Self.params(.keyboardDisplay, sc: false, oob: true), responder: Self.params(.displayOnly, sc: false)) == .passkeyEntry)
        #expect(M.select(initiator: Self.params(.keyboardDisplay, sc: false, oob: true), responder: Self.params(.displayOnly, sc: false, oob: true)) == .outOfBand)
        #expect(M.select(initiator: Self.params(.noInputNoOutput, sc: true, oob: true), responder: Self.params(.noInputNoOutput, sc: true)) == .outOfBand)
    }
}
