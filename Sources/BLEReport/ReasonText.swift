import BLEProtocol

/// An HCI reason in a few words, where a line has no room for its name (the story line of a
/// disconnection, the HTML timeline's end marks and failed attempts); the JSON, the finding and the
/// tooltip carry the full name. The words follow the code, not a guess at the side: 0x13 is also
/// what a host sends in its own Disconnect. Core v5.4 Vol 1 Part F 1.3 (error codes).
enum ReasonText {
    static func short(_ reason: HCIStatus) -> String {
        switch reason.rawValue {
        case 0x05: "authentication failure"
        case 0x08: "supervision timeout"
        case 0x13: "remote user terminated"
        case 0x14: "remote: low resources"
        case 0x15: "remote: power off"
        case 0x16: "local host terminated"
        case 0x1F: "unspecified error"
        case 0x22: "LL response timeout"
        case 0x28: "instant passed"
        case 0x3B: "parameters unacceptable"
        case 0x3D: "MIC failure"
        case 0x3E: "failed to establish"
        default: reason.name
        }
    }
}
