import BLEBytes

extension AD {
    /// Apple iBeacon, carried in Manufacturer Specific Data of company 0x004C:
    /// `02 15` (type, length 21), proximity UUID (16 bytes, big-endian), major and minor (big-endian),
    /// measured power at 1 m (signed dBm).
    public struct IBeacon: Hashable, Sendable {
        public var uuid: BluetoothUUID
        public var major: UInt16
        public var minor: UInt16
        public var measuredPower: Int8

        public init(uuid: BluetoothUUID, major: UInt16, minor: UInt16, measuredPower: Int8) {
            (self.uuid, self.major, self.minor, self.measuredPower) = (uuid, major, minor, measuredPower)
        }

        public static let appleCompanyID: UInt16 = 0x004C

        /// Recognises an iBeacon in manufacturer data (after the company ID); nil when it is not one.
        /// - Throws: when the data starts `02 15` but is not 23 bytes long.
        public static func parse(company: UInt16, _ data: ByteReader) throws(DecodeError) -> IBeacon? {
            guard company == appleCompanyID, data.peekU8() == 0x02, data.peekU8(at: 1) == 0x15 else { return nil }
            var r = data
            guard r.remaining == 23 else {
                throw DecodeError(kind: .lengthMismatch(declared: 23, actual: r.remaining), offset: r.absoluteOffset, field: "iBeacon")
            }
            try r.skip(2, "iBeacon Type")
            let high = try r.u64be("Proximity UUID"), low = try r.u64be("Proximity UUID")
            return IBeacon(uuid: BluetoothUUID(high: high, low: low), major: try r.u16be("Major"), minor: try r.u16be("Minor"),
                           measuredPower: try r.i8("Measured Power"))
        }
    }

    /// An Eddystone frame (Google), carried in Service Data for 16-bit UUID 0xFEAA.
    /// See github.com/google/eddystone (protocol-specification.md).
    public enum Eddystone: Hashable, Sendable {
        /// Frame 0x00: Ranging Data (TX power at 0 m), 10-byte namespace, 6-byte instance.
        case uid(txPower: Int8, namespace: [UInt8], instance: [UInt8])
        /// Frame 0x10: TX power at 0 m and the expanded URL.
        case url(txPower: Int8, url: String)
        /// Frame 0x20 version 0x00: unencrypted telemetry.
        case tlm(TLM)
        /// Frame 0x20 version 0x01: encrypted telemetry (12 bytes), salt, integrity check.
        case encryptedTLM(data: [UInt8], salt: UInt16, mic: UInt16)
        /// Frame 0x30: TX power at 0 m, 8-byte ephemeral identifier.
        case eid(txPower: Int8, eid: [UInt8])
        /// Any other frame type.
        case unknown(frameType: UInt8, data: [UInt8])

        /// Unencrypted TLM, all fields big-endian.
        public struct TLM: Hashable, Sendable {
            /// Battery voltage in mV; 0 when not supported.
            public var batteryMillivolts: UInt16
            /// Beacon temperature, signed 8.8 fixed point °C; 0x8000 when not supported.
            public var temperatureRaw: UInt16
            /// Advertising PDUs since power-on or reboot.
            public var advertisingCount: UInt32
            /// Time since power-on or reboot, ×0.1 s.
            public var uptimeDeciseconds: UInt32
            public init(batteryMillivolts: UInt16, temperatureRaw: UInt16, advertisingCount: UInt32, uptimeDeciseconds: UInt32) {
                (self.batteryMillivolts, self.temperatureRaw, self.advertisingCount, self.uptimeDeciseconds) =
                    (batteryMillivolts, temperatureRaw, advertisingCount, uptimeDeciseconds)
            }
            /// °C, nil when not supported.
            public var temperature: Double? {
                temperatureRaw == 0x8000 ? nil : Double(Int16(bitPattern: temperatureRaw)) / 256
            }
        }

        public static let serviceUUID: UInt16 = 0xFEAA

        public static let frameNames = NameTable([(0x00, "UID"), (0x10, "URL"), (0x20, "TLM"), (0x30, "EID")])

        /// URL Scheme Prefix byte.
        static let schemes = ["http://www.", "https://www.", "http://", "https://"]
        /// HTTP URL encoding bytes 0x00–0x0D.
        static let expansions = [".com/", ".org/", ".edu/", ".net/", ".info/", ".biz/", ".gov/",
                                 ".com", ".org", ".edu", ".net", ".info", ".biz", ".gov"]

        /// Decodes an Eddystone frame from Service Data (after the 0xFEAA UUID).
        /// - Throws: `DecodeError` when the frame is shorter than its type needs or a URL has an
        ///   unknown scheme.
        public static func parse(_ r: inout ByteReader) throws(DecodeError) -> Eddystone {
            let frame = try r.u8("Frame Type")
            switch frame {
            case 0x00:
                let tx = try r.i8("Ranging Data")
                let namespace = try r.copy(10, "Namespace")
                let instance = try r.copy(6, "Instance")
                if r.remaining == 2 { try r.skip(2, "RFU") }
                return .uid(txPower: tx, namespace: namespace, instance: instance)
            case 0x10:
                let tx = try r.i8("TX Power")
                return .url(txPower: tx, url: try expandURL(&r))
            case 0x20:
                let version = try r.u8("TLM Version")
                if version == 0x01 {
                    return .encryptedTLM(data: try r.copy(12, "Encrypted TLM"), salt: try r.u16be("Salt"), mic: try r.u16be("Message Integrity Check"))
                }
                guard version == 0x00 else {
                    throw DecodeError(kind: .invalidValue(UInt64(version)), offset: r.absoluteOffset &- 1, field: "TLM Version")   // safe: just read
                }
                return .tlm(TLM(batteryMillivolts: try r.u16be("Battery Voltage"), temperatureRaw: try r.u16be("Beacon Temperature"),
                                advertisingCount: try r.u32be("Advertising PDU Count"), uptimeDeciseconds: try r.u32be("Time Since Power-On")))
            case 0x30:
                let tx = try r.i8("TX Power")
                return .eid(txPower: tx, eid: try r.copy(8, "Ephemeral Identifier"))
            default:
                return .unknown(frameType: frame, data: Array(r.rest().bytes))
            }
        }

        /// URL Scheme Prefix, then the encoded URL: bytes 0x00–0x0D expand to `.com/`…, printable
        /// ASCII stays, anything else is shown as `\xNN`.
        /// - Throws: `.invalidValue` for a scheme prefix above 0x03.
        static func expandURL(_ r: inout ByteReader) throws(DecodeError) -> String {
            let schemeOffset = r.absoluteOffset
            let scheme = Int(try r.u8("URL Scheme"))
            guard scheme < schemes.count else {
                throw DecodeError(kind: .invalidValue(UInt64(scheme)), offset: schemeOffset, field: "URL Scheme")
            }
            var url = schemes[scheme]
            for b in r.rest().bytes {
                if Int(b) < expansions.count {
                    url += expansions[Int(b)]
                } else if (0x21...0x7E).contains(b) {
                    url.unicodeScalars.append(Unicode.Scalar(b))
                } else {
                    url += "\\x" + Hex.pad(b, 2)
                }
            }
            return url
        }
    }
}

extension AD {
    /// URI Scheme Name String Mapping, Assigned Numbers 2.7: the URI AD type (0x24) starts with
    /// the UTF-8 encoding of a code point that names the scheme. U+0001 means no scheme (the
    /// text carries the whole URI); U+0002… map to the strings below in order.
    static let uriSchemes: [String] = [
        "aaa:", "aaas:", "about:", "acap:", "acct:", "cap:", "cid:", "coap:", "coaps:", "crid:", "data:", "dav:",
        "dict:", "dns:", "file:", "ftp:", "geo:", "go:", "gopher:", "h323:", "http:", "https:", "iax:", "icap:",
        "im:", "imap:", "info:", "ipp:", "ipps:", "iris:", "iris.beep:", "iris.xpc:", "iris.xpcs:", "iris.lwz:",
        "jabber:", "ldap:", "mailto:", "mid:", "msrp:", "msrps:", "mtqp:", "mupdate:", "news:", "nfs:", "ni:",
        "nih:", "nntp:", "opaquelocktoken:", "pop:", "pres:", "reload:", "rtsp:", "rtsps:", "rtspu:", "service:",
        "session:", "shttp:", "sieve:", "sip:", "sips:", "sms:", "snmp:", "soap.beep:", "soap.beeps:", "stun:",
        "stuns:", "tag:", "tel:", "telnet:", "tftp:", "thismessage:", "tn3270:", "tip:", "turn:", "turns:", "tv:",
        "urn:", "vemmi:", "ws:", "wss:", "xcon:", "xcon-userid:", "xmlrpc.beep:", "xmlrpc.beeps:", "xmpp:",
        "z39.50r:", "z39.50s:", "acr:", "adiumxtra:", "afp:", "afs:", "aim:", "apt:", "attachment:", "aw:",
        "barion:", "beshare:", "bitcoin:", "bolo:", "callto:", "chrome:", "chrome-extension:",
        "com-eventbrite-attendee:", "content:", "cvs:", "dlna-playsingle:", "dlna-playcontainer:", "dtn:", "dvb:",
        "ed2k:", "facetime:", "feed:", "feedready:", "finger:", "fish:", "gg:", "git:", "gizmoproject:", "gtalk:",
        "ham:", "hcp:", "icon:", "ipn:", "irc:", "irc6:", "ircs:", "itms:", "jar:", "jms:", "keyparc:", "lastfm:",
        "ldaps:", "magnet:", "maps:", "market:", "message:", "mms:", "ms-help:", "ms-settings-power:", "msnim:",
        "mumble:", "mvn:", "notes:", "oid:", "palm:", "paparazzi:", "pkcs11:", "platform:", "proxy:", "psyc:",
        "query:", "res:", "resource:", "rmi:", "rsync:", "rtmfp:", "rtmp:", "secondlife:", "sftp:", "sgn:",
        "skype:", "smb:", "smtp:", "soldat:", "spotify:", "ssh:", "steam:", "submit:", "svn:", "teamspeak:",
        "teliaeid:", "things:", "udp:", "unreal:", "ut2004:", "ventrilo:", "view-source:", "webcal:", "wtai:",
        "wyciwyg:", "xfire:", "xri:", "ymsgr:", "example:", "ms-settings-cloudstorage:", "bluetooth:", "bl:",
    ]

    /// The scheme string of a URI scheme code point (`0x17` → `https:`); "" for U+0001; nil if unassigned.
    public static func uriScheme(_ codePoint: UInt32) -> String? {
        if codePoint == 1 { return "" }
        guard codePoint >= 2 else { return nil }
        let i = Int(codePoint) &- 2   // safe: codePoint >= 2
        return i < uriSchemes.count ? uriSchemes[i] : nil
    }

    /// Decodes URI AD data: the scheme code point (UTF-8, 1–3 bytes here), then the rest of the URI.
    /// An unassigned scheme is kept as `\u{…}` in front of the text.
    /// - Throws: `.invalidValue` when the data does not start with a valid UTF-8 code point.
    public static func decodeURI(_ r: inout ByteReader) throws(DecodeError) -> String {
        let offset = r.absoluteOffset
        let lead = try r.u8("URI Scheme")
        var codePoint: UInt32
        let extra: Int
        switch lead {
        case 0x00...0x7F: (codePoint, extra) = (UInt32(lead), 0)
        case 0xC2...0xDF: (codePoint, extra) = (UInt32(lead & 0x1F), 1)
        case 0xE0...0xEF: (codePoint, extra) = (UInt32(lead & 0x0F), 2)
        default: throw DecodeError(kind: .invalidValue(UInt64(lead)), offset: offset, field: "URI Scheme")
        }
        for _ in 0..<extra {
            let b = try r.u8("URI Scheme")
            guard b & 0xC0 == 0x80 else { throw DecodeError(kind: .invalidValue(UInt64(b)), offset: offset, field: "URI Scheme") }
            codePoint = codePoint << 6 | UInt32(b & 0x3F)
        }
        let body = String(decoding: r.rest().bytes, as: UTF8.self)
        guard let scheme = uriScheme(codePoint) else { return "\\u{\(String(codePoint, radix: 16))}" + body }
        return scheme + body
    }
}
