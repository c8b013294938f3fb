import BLEBytes
import BLEAnalysis

/// Text and JSON for `bleanalyze redact`: what was replaced (stdout), and what the copy still
/// holds that the user must judge (stderr: the app's own data in ATT values, with its printable text).
public enum RedactionText {
    /// Kept strings shown in the text summary; `--json` lists them all.
    public static let shownStrings = 20

    /// The summary of what was replaced.
    public static func replaced(_ s: RedactionSummary, output: String, options: RedactionOptions) -> String {
        var t = "wrote \(output): \(s.format.rawValue)\(s.inputWasCompressed ? " (the gzip input is written uncompressed)" : ""), "
            + "\(s.frames) frames, \(s.framesChanged) changed\n"
        t += "  addresses: \(s.distinctAddresses) replaced in \(s.addressFields) fields\n"
        if s.distinctAccessAddresses > 0 || s.linkFields > 0 {
            t += "  access addresses: \(s.distinctAccessAddresses) replaced, CRC init values: \(s.distinctCRCInits) replaced, in \(s.linkFields) fields (CRCs recomputed)\n"
        }
        t += "  keys: \(s.keyFields) fields zeroed\n"
        if options.keepNames {
            t += "  names and log text: kept (--keep-names)\n"
        } else {
            t += "  names: \(s.distinctNames) replaced in \(s.nameFields) fields; log records: \(s.logRecords) replaced\n"
            if s.identifierFields > 0 {
                t += "  identifiers from those names (serial numbers) found in app data: \(s.identifierFields) replaced\n"
            }
        }
        if s.controlRecords > 0 { t += "  BlueZ management records: \(s.controlRecords) with parameters zeroed\n" }
        if options.dropValues {
            t += "  ATT values: \(s.droppedValues) replaced by numbers of the same length (--drop-values: the n-th distinct value becomes n); GATT discovery and CCCD values kept\n"
        }
        if s.zeroedTailBytes > 0 {
            t += "  \(s.zeroedTailBytes) bytes after the last readable record written as zeros (they could not be checked)\n"
        }
        return t
    }

    /// What the copy keeps that may identify someone: ATT values (app data), with their printable
    /// text. Empty when nothing is kept.
    public static func kept(_ s: RedactionSummary, output: String, options: RedactionOptions) -> String {
        guard !options.dropValues, s.keptValues > 0 else {
            guard !s.keptStrings.isEmpty else { return "" }
            return "\(output) keeps text in GATT discovery or CCCD values:\n" + list(s.keptStrings)
        }
        var t = "\(output) keeps the app's own data: \(s.keptValues) ATT values (reads, writes, notifications) are copied unchanged"
        if s.keptStrings.isEmpty {
            t += "; none holds printable text of \(PrintableRuns.minimumLength) characters or more.\n"
        } else {
            t += ". Printable text in them (\(s.keptStrings.count)), each with its attribute and first frame:\n"
            t += list(s.keptStrings)
        }
        t += "  Read them before sharing, or run again with --drop-values (values replaced by numbers of the same length, same findings).\n"
        return t
    }

    static func list(_ strings: [KeptString]) -> String {
        var t = ""
        for k in strings.prefix(shownStrings) {
            t += "  \"\(escaped(k.text))\"  " + attribute(k) + ", frame \(k.firstFrame)"
            t += k.occurrences > 1 ? " (\(k.occurrences) values)\n" : "\n"
        }
        if strings.count > shownStrings { t += "  … \(strings.count - shownStrings) more (--json lists them all)\n" }
        return t
    }

    static func attribute(_ k: KeptString) -> String {
        guard let h = k.handle else { return "Read Multiple response" }
        if let a = k.attribute { return a + " @0x" + Hex.pad(h, 4) }
        return "handle 0x" + Hex.pad(h, 4)
    }

    static func escaped(_ s: String) -> String {
        var out = ""
        for c in s { if c == "\\" || c == "\"" { out.append("\\") }; out.append(c) }
        return out
    }

    /// One JSON object with every count and every kept string.
    public static func json(_ s: RedactionSummary, output: String, options: RedactionOptions) -> String {
        var w = JSONWriter()
        w.beginObject()
        w.string("output", output)
        w.string("format", s.format.rawValue)
        w.int("datalink", s.datalink)
        w.int("frames", s.frames)
        w.int("framesChanged", s.framesChanged)
        w.beginObject("addresses"); w.int("distinct", s.distinctAddresses); w.int("fields", s.addressFields); w.endObject()
        w.beginObject("accessAddresses"); w.int("distinct", s.distinctAccessAddresses); w.int("crcInits", s.distinctCRCInits)
        w.int("fields", s.linkFields); w.endObject()
        w.int("keyFields", s.keyFields)
        w.bool("namesKept", options.keepNames)
        w.beginObject("names"); w.int("distinct", s.distinctNames); w.int("fields", s.nameFields)
        w.int("identifierFields", s.identifierFields); w.endObject()
        w.int("logRecords", s.logRecords)
        w.int("controlRecords", s.controlRecords)
        w.beginObject("attValues"); w.int("kept", s.keptValues); w.int("dropped", s.droppedValues); w.endObject()
        w.beginArray("keptStrings")
        for k in s.keptStrings {
            w.beginObject()
            w.string("text", k.text)
            w.optional("handle", k.handle)
            w.optional("uuid", k.uuid)
            w.optional("attribute", k.attribute)
            w.int("firstFrame", k.firstFrame)
            w.int("occurrences", k.occurrences)
            w.endObject()
        }
        w.endArray()
        w.int("zeroedTailBytes", s.zeroedTailBytes)
        w.endObject()
        return w.output
    }
}
