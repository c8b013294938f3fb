import BLEBytes

/// The controller's version, from the return parameters of Read Local Version Information
/// (Core v5.4 Vol 4 Part E 7.4.1): HCI and LMP/LL versions (Assigned Numbers "Link Layer
/// Version": 9 = 5.0 … 13 = 5.4), the revisions the manufacturer assigns, and the company ID
/// of the controller's manufacturer.
public struct LocalVersion: Sendable, Equatable {
    public var hciVersion: UInt8
    public var hciRevision: UInt16
    public var lmpVersion: UInt8
    /// Company identifier (Assigned Numbers 7) of the controller's manufacturer.
    public var manufacturer: UInt16
    public var lmpSubversion: UInt16

    public init(hciVersion: UInt8, hciRevision: UInt16, lmpVersion: UInt8, manufacturer: UInt16, lmpSubversion: UInt16) {
        (self.hciVersion, self.hciRevision, self.lmpVersion) = (hciVersion, hciRevision, lmpVersion)
        (self.manufacturer, self.lmpSubversion) = (manufacturer, lmpSubversion)
    }

    /// Decodes the return parameters after the status byte (8 bytes).
    /// - Throws: `DecodeError.truncated` naming the missing field.
    public static func decode(_ r: inout ByteReader) throws(DecodeError) -> LocalVersion {
        LocalVersion(hciVersion: try r.u8("HCI Version"), hciRevision: try r.u16le("HCI Revision"),
                     lmpVersion: try r.u8("LMP Version"), manufacturer: try r.u16le("Company Identifier"),
                     lmpSubversion: try r.u16le("LMP Subversion"))
    }

    /// "5.3" for a known version number, else nil.
    public static func versionName(_ v: UInt8) -> String? { HCINames.version.name(UInt64(v)) }
}
