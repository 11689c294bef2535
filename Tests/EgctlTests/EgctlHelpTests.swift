import Foundation
import Testing

@Suite("egctl's help reads well at 80 columns")
struct EgctlHelpTests {
    static let commands: [[String]] = [
        [], ["demo"], ["inspect"], ["replay"], ["verify"], ["compact"], ["dump"], ["history"], ["salvage"],
    ]

    @Test("no line is wider than 80 columns, prose has no runs of spaces, no internal names", arguments: commands)
    func help(command: [String]) throws {
        let result = try Egctl.run(command + ["--help"], environment: ["COLUMNS": "80"])
        #expect(result.status == 0, "\(result.stderr)")
        let name = (["egctl"] + command).joined(separator: " ")
        let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count > 5, "\(name) --help printed: \(result.stdout)")
        for line in lines {
            #expect(line.count <= 80, "\(name) --help: a line of \(line.count) columns: \(line)")
            // Indented lines are columns (options, examples); a run of spaces inside a sentence is a line break
            // in a Swift string that lost its backslash.
            if line.first != " " { #expect(!line.contains("  "), "\(name) --help: a run of spaces in: \(line)") }
            #expect(!line.contains("seed 0"), "\(name) --help names a seed document: \(line)")
        }
    }
}
