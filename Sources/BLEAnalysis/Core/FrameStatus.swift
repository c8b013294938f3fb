import BLEBytes
import BLECapture

/// Whether a frame decoded cleanly, as decided by the analysis pass (structural checks and typed
/// decoders). A malformed frame is still counted and shown raw, with the reason and offset.
public enum FrameStatus: Sendable, Equatable {
    case ok
    case malformed(reason: String, offset: Int)

    public var isMalformed: Bool { if case .malformed = self { true } else { false } }

    static func record(_ problem: RecordProblem, frame: Frame) -> FrameStatus {
        .malformed(reason: problem.description, offset: frame.recordOffset)
    }

    static func decode(_ error: DecodeError) -> FrameStatus {
        .malformed(reason: error.description, offset: error.offset)
    }
}
