import Foundation
import LogFormat

/// Writes the seed corpus of every target from the golden files (`Tests/LogFormatTests/Golden`): the files whole,
/// their header regions, their frames, and every payload they hold.
public enum SeedCorpus {
    /// Writes `CORPUS-DIR/<target>/<golden file>-<what>` for every golden file in `goldenDirectory`.
    public static func write(goldenDirectory: String, corpusDirectory: String) throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: goldenDirectory)
            .filter { $0.hasSuffix(".eglog") }.sorted()
        for name in names {
            let path = goldenDirectory + "/" + name
            let stem = String(name.dropLast(".eglog".count))
            let file = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
            var seeds: [(FuzzTarget, String, [UInt8])] = []
            let frames = Array(file[Int(LogFileHeader.framesByteOffset)...])
            let region = Array(file[..<Int(LogFileHeader.framesByteOffset)])
            for control: UInt8 in [0, 3] {
                seeds.append((.open, "\(stem)-repair\(control)", [control] + file))
                seeds.append((.header, "\(stem)-repair\(control)", [control] + region))
                seeds.append((.frame, "\(stem)-repair\(control)", [control] + frames))
            }
            var index = 0
            var checkpointTransactionID: UInt64 = 0
            try LogReader(path: path).scan { record in
                index += 1
                switch record {
                case .transaction(let transaction):
                    seeds.append((.changeset, "\(stem)-\(transaction.transactionID)", try transaction.payload))
                case .schema(let schema, _):
                    seeds.append((.schema, "\(stem)-\(index)", try schema.encoded()))
                case .checkpointBegin(let begin, _):
                    checkpointTransactionID = begin.lastTransactionID
                    seeds.append((.checkpoint, "\(stem)-\(index)-begin", [0] + (try begin.encoded())))
                case .checkpointChunk(let chunk, _):
                    seeds.append((.checkpoint, "\(stem)-\(index)-chunk", [1] + (try chunk.encoded())))
                case .checkpointEnd(let end, _):
                    seeds.append((.checkpoint, "\(stem)-\(index)-end", [2] + (try end.encoded())))
                case .checkpointDirectory(let directory, _):
                    seeds.append((.checkpoint, "\(stem)-\(index)-directory", [3] + (try directory.encoded())))
                    // Index chunks (format 1.4) are not records: read them through the directory.
                    let reader = try LogReader(path: path)
                    for index in directory.indexes {
                        for (position, entry) in index.chunks.enumerated() {
                            let chunk = try reader.readIndexChunk(
                                entry, arity: Int(index.arity), checkpointTransactionID: checkpointTransactionID)
                            let seedName = "\(stem)-index-\(index.entityIndex)-\(index.ordinal)-\(position)"
                            seeds.append((.checkpoint, seedName, [4] + (try chunk.encoded())))
                        }
                    }
                default:
                    break
                }
            }
            for (target, seedName, bytes) in seeds {
                let directory = "\(corpusDirectory)/\(target.rawValue)"
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
                try Data(bytes).write(to: URL(fileURLWithPath: "\(directory)/\(seedName)"))
            }
        }
    }
}
