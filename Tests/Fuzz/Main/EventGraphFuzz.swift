import Foundation
import FuzzTargets

/// The target this process fuzzes, named by `EG_FUZZ_TARGET` (libFuzzer owns the command line).
let selectedTarget: FuzzTarget = {
    let name = ProcessInfo.processInfo.environment["EG_FUZZ_TARGET"] ?? ""
    guard let target = FuzzTarget(rawValue: name) else {
        let names = FuzzTarget.allCases.map(\.rawValue).joined(separator: ", ")
        FileHandle.standardError.write(Data("EventGraphFuzz: set EG_FUZZ_TARGET to one of \(names)\n".utf8))
        exit(2)
    }
    return target
}()

/// libFuzzer's entry point (linked only by `scripts/fuzz`, which builds with `-sanitize=fuzzer` and `-D FUZZING`).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    selectedTarget.run(UnsafeRawBufferPointer(start: data, count: size))
    return 0
}

#if !FUZZING
    /// Without the fuzzer: `EventGraphFuzz TARGET FILE...` runs files through a target (to reproduce a finding
    /// under a debugger), and `EventGraphFuzz seed-corpus GOLDEN-DIR CORPUS-DIR` writes the seed corpus.
    @main
    enum EventGraphFuzz {
        static func main() throws {
            let arguments = Array(CommandLine.arguments.dropFirst())
            if arguments.first == "seed-corpus", arguments.count == 3 {
                try SeedCorpus.write(goldenDirectory: arguments[1], corpusDirectory: arguments[2])
                return
            }
            guard let name = arguments.first, let target = FuzzTarget(rawValue: name), arguments.count > 1 else {
                let names = FuzzTarget.allCases.map(\.rawValue).joined(separator: "|")
                print("usage: EventGraphFuzz \(names) FILE...\n       EventGraphFuzz seed-corpus GOLDEN-DIR CORPUS-DIR")
                exit(2)
            }
            for file in arguments.dropFirst() {
                target.run(Array(try Data(contentsOf: URL(fileURLWithPath: file))))
                print("\(file): no crash")
            }
        }
    }
#endif
