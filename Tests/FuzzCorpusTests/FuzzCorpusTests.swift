import Foundation
import FuzzTargets
import Testing

/// Every checked-in corpus input and every finding, replayed through the fuzz entry points, so that a crash found
/// once stays fixed. (A regression here crashes the test process, which fails the run and names the input.)
@Suite("Fuzz corpus and findings replay")
struct FuzzCorpusTests {
    /// `Tests/Fuzz`, found from this file so that the test needs no resources.
    static let fuzzDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fuzz").path

    /// One input of one target: `Tests/Fuzz/<Corpus|Findings>/<target>/<name>`.
    struct Input: CustomTestStringConvertible, Sendable {
        var target: FuzzTarget
        var path: String
        var testDescription: String { "\(target.rawValue)/\(URL(fileURLWithPath: path).lastPathComponent)" }
    }

    static func inputs(in folder: String) -> [Input] {
        FuzzTarget.allCases.flatMap { target in
            let directory = "\(fuzzDirectory)/\(folder)/\(target.rawValue)"
            let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
            return names.filter { !$0.hasPrefix(".") }.sorted().map {
                Input(target: target, path: "\(directory)/\($0)")
            }
        }
    }

    static var corpus: [Input] { inputs(in: "Corpus") }
    static var findings: [Input] { inputs(in: "Findings") }

    @Test("every target has a seed corpus")
    func everyTargetHasSeeds() {
        for target in FuzzTarget.allCases {
            #expect(Self.corpus.contains { $0.target == target }, "no corpus for \(target.rawValue)")
        }
    }

    @Test("corpus inputs run without a crash", arguments: corpus)
    func corpusRuns(_ input: Input) throws {
        input.target.run(Array(try Data(contentsOf: URL(fileURLWithPath: input.path))))
    }

    @Test("findings stay fixed", arguments: findings)
    func fixedFindingsStayFixed(_ input: Input) throws {
        input.target.run(Array(try Data(contentsOf: URL(fileURLWithPath: input.path))))
    }
}
