#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// `Fuzz` has two faces (see scripts/fuzz.sh):
// - built with `-sanitize=fuzzer,address -DFUZZ_DRIVER` it is a libFuzzer binary:
//   `Fuzz HARNESS [libFuzzer flags] [corpus dirs]`;
// - built normally (every `swift build`) it replays inputs through the same harness functions:
//   `Fuzz HARNESS FILE|DIR…` (exit 1 on a broken invariant; a trap ends it by signal), and makes
//   seed corpora: `Fuzz seed HARNESS OUTDIR CAPTURE…`, `Fuzz seed-hex HARNESS OUTDIR HEXFILE…`.

#if FUZZ_DRIVER
@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(_ argc: UnsafeMutablePointer<CInt>,
                         _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
                         _ cb: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt) -> CInt

/// The harness libFuzzer drives (a C callback cannot capture it).
nonisolated(unsafe) var fuzzHarness: Harness = .capture

let arguments = CommandLine.arguments
if arguments.count >= 2, let harness = Harness(rawValue: arguments[1]) {
    fuzzHarness = harness
    // libFuzzer parses the rest: drop the harness name from argv.
    var kept: [UnsafeMutablePointer<CChar>?] = [strdup(arguments[0])] + arguments.dropFirst(2).map { strdup($0) } + [nil]
    var argc = CInt(kept.count - 1)
    let code = kept.withUnsafeMutableBufferPointer { buffer -> CInt in
        var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = buffer.baseAddress
        return LLVMFuzzerRunDriver(&argc, &argv) { data, size in
            let input = UnsafeRawBufferPointer(start: data, count: size)
            let violations = fuzzHarness.run(input)
            if !violations.isEmpty {
                for v in violations { printError("invariant broken: \(v)\n") }
                abort()
            }
            return 0
        }
    }
    exit(code)
}
exit(FuzzCommand.main(arguments))
#else
exit(FuzzCommand.main(CommandLine.arguments))
#endif
