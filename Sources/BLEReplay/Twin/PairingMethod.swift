/// How a pairing authenticates (Core v5.4 Vol 3 Part H 2.3.5.1): from both devices' OOB flags,
/// MITM bits (AuthReq bit 2) and IO capabilities, given in their Pairing Request and Response.
enum PairingMethod: String {
    case justWorks = "Just Works"
    case numericComparison = "Numeric Comparison"
    case passkeyEntry = "Passkey Entry"
    case outOfBand = "Out of Band"

    /// Table 2.8, initiator's IO capability (row) by responder's (column): 0 DisplayOnly,
    /// 1 DisplayYesNo, 2 KeyboardOnly, 3 NoInputNoOutput, 4 KeyboardDisplay. J Just Works,
    /// P Passkey Entry, N Numeric Comparison with Secure Connections (legacy: Just Works),
    /// K Numeric Comparison with Secure Connections (legacy: Passkey Entry).
    private static let table = ["JJPJP", "JNPJK", "PPPJP", "JJJJJ", "PKPJK"]

    /// The method for a Pairing Request and Response (7-byte PDUs: code, IO capability, OOB flag,
    /// AuthReq, ...) with Secure Connections (`sc`) or legacy pairing (Tables 2.6, 2.7).
    static func choose(request: [UInt8], response: [UInt8], sc: Bool) -> PairingMethod {
        let oob = sc ? (request[2] == 1 || response[2] == 1) : (request[2] == 1 && response[2] == 1)
        if oob { return .outOfBand }
        guard request[3] & 0x04 != 0 || response[3] & 0x04 != 0 else { return .justWorks }
        // Reserved IO capabilities count as NoInputNoOutput.
        let row = Array(table[Int(request[1] <= 4 ? request[1] : 3)]), cell = row[Int(response[1] <= 4 ? response[1] : 3)]
        switch cell {
        case "J": return .justWorks
        case "N": return sc ? .numericComparison : .justWorks
        case "K": return sc ? .numericComparison : .passkeyEntry
        default: return .passkeyEntry
        }
    }
}
