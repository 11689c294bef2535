import Dispatch
import Foundation
import TestSupport
import Testing

@testable import LogFormat

/// Reads that return no bytes must not write the standard library's shared empty-array storage: its count is written
/// by `Array(unsafeUninitializedCapacity: 0, …)`, a data race with every thread reading an empty array at that moment
/// (`Concurrency.md`, rule 5). Under the thread sanitizer (`scripts/tsan` runs this suite) the race stops the run;
/// without it the test only checks the results.
@Suite("Empty reads beside readers of empty arrays")
struct EmptyArrayConcurrencyTests {
    /// Runs `makeEmpty` many times on one thread while this one reads empty arrays' counts.
    static func beside(_ makeEmpty: @escaping @Sendable () throws -> Int) throws {
        let made = LockedValue(0)
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            var total = 0
            for _ in 0..<2_000 { total += (try? makeEmpty()) ?? 1 }
            made.withLock { $0 = total }
            done.signal()
        }
        thread.start()
        var read = 0
        for round in 0..<20_000 {
            // An empty array made at run time: the shared empty storage, whose count this reads.
            let empty = [Int](repeating: round, count: round % 1)
            read += empty.withUnsafeBufferPointer { $0.count }
        }
        done.wait()
        #expect(read == 0)
        #expect(made.withLock { $0 } == 0)
    }

    @Test("a reader's empty byte string")
    func emptyByteString() throws {
        try Self.beside {
            try ByteReader.withReader(over: [0x41]) { (reader: inout ByteReader) throws(LogFormatError) -> Int in
                try reader.readBytes(count: 0, "empty").count
            }
        }
    }

    @Test("a read of no bytes from a file")
    func emptyFileRead() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("bytes.bin")
        try Data([1, 2, 3]).write(to: URL(fileURLWithPath: path))
        try Self.beside {
            let file = try LogFile(path: path, flags: O_RDONLY, faults: nil)
            return try file.read(count: 0, at: 1).count
        }
    }
}
