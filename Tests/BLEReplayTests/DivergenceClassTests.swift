@testable import BLEReplay
import Testing

/// LE Create Connection Cancel answered Success on one side and Command Disallowed on the other
/// is the controller's (whether an attempt was still pending, Core v5.4 Vol 4 Part E 7.8.13);
/// any other difference in a connection command's answer stays behaviour.
struct DivergenceClassTests {
    /// Command Complete (7.7.14): Num_HCI_Command_Packets 1, the opcode, Status.
    static func commandComplete(_ opcode: UInt16, status: UInt8) -> LinkUnit {
        let bytes: [UInt8] = [0x0E, 0x04, 0x01, UInt8(opcode & 0xFF), UInt8(opcode >> 8), status]
        return LinkUnit(content: .event(bytes), packets: [H4Packet(.event, bytes)], frames: [1], timestamp: 0, fromHost: false)
    }

    /// Command Status (7.7.15): Status, Num_HCI_Command_Packets 1, the opcode.
    static func commandStatus(_ opcode: UInt16, status: UInt8) -> LinkUnit {
        let bytes: [UInt8] = [0x0F, 0x04, status, 0x01, UInt8(opcode & 0xFF), UInt8(opcode >> 8)]
        return LinkUnit(content: .event(bytes), packets: [H4Packet(.event, bytes)], frames: [1], timestamp: 0, fromHost: false)
    }

    static func mismatch(_ expected: LinkUnit, _ actual: LinkUnit) -> Divergence {
        Divergence(kind: .mismatch, frame: 1, step: 3, fromHost: false, message: "differs", differences: [], expected: expected, actual: actual)
    }

    @Test(arguments: [(UInt8(0x00), UInt8(0x0C)), (0x0C, 0x00)])
    func cancelFindingNoAttemptIsEnvironment(_ recorded: UInt8, _ live: UInt8) {
        let d = Self.mismatch(Self.commandComplete(0x200E, status: recorded), Self.commandComplete(0x200E, status: live))
        #expect(d.divergenceClass == .environment)
    }

    @Test func otherAnswersToConnectionCommandsStayBehaviour() {
        // The cancel refused for another reason (Invalid HCI Command Parameters).
        #expect(Self.mismatch(Self.commandComplete(0x200E, status: 0x00), Self.commandComplete(0x200E, status: 0x12)).divergenceClass == .behaviour)
        // The attempt itself refused (Command Disallowed): a connection that does not come up.
        #expect(Self.mismatch(Self.commandStatus(0x2043, status: 0x00), Self.commandStatus(0x2043, status: 0x0C)).divergenceClass == .behaviour)
        // A configuration command's answer is the controller's anyway.
        #expect(Self.mismatch(Self.commandComplete(0x0C5B, status: 0x00), Self.commandComplete(0x0C5B, status: 0x01)).divergenceClass == .environment)
    }
}
