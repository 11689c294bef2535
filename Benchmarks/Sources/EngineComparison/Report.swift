import Foundation

/// The comparison's outputs: a text table, a JSON array and an SVG bar chart of the ratios.
enum Report {
    static func table(_ results: [ScenarioResult]) -> String {
        let header = ["scenario", "EventGraph", "GRDB", "unit", "ratio"]
        let rows = results.map { result in
            [
                result.scenario.key, format(result.eventGraph), format(result.grdb), result.scenario.unit,
                ratioText(result.ratio),
            ]
        }
        let widths = header.indices.map { column in ([header] + rows).map { $0[column].count }.max()! }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { column, cell in
                let padding = String(repeating: " ", count: widths[column] - cell.count)
                // Numbers right-aligned, text left-aligned.
                return column == 0 || column == 3 ? cell + padding : padding + cell
            }.joined(separator: "  ")
        }
        return ([line(header), line(widths.map { String(repeating: "-", count: $0) })] + rows.map(line))
            .joined(separator: "\n")
    }

    /// The table as Markdown (for BENCHMARKS.md).
    static func markdown(_ results: [ScenarioResult]) -> String {
        var lines = ["| scenario | EventGraph | GRDB | unit | ratio |", "|---|---:|---:|---|---:|"]
        for result in results {
            lines.append(
                "| `\(result.scenario.key)` | \(format(result.eventGraph)) | \(format(result.grdb)) | "
                    + "\(result.scenario.unit) | \(ratioText(result.ratio)) |")
        }
        return lines.joined(separator: "\n")
    }

    static func json(_ results: [ScenarioResult]) throws -> Data {
        struct Entry: Encodable {
            var scenario: String
            var unit: String
            var eventgraph: Double
            var grdb: Double
            var ratio: Double
        }
        let entries = results.map {
            Entry(
                scenario: $0.scenario.key, unit: $0.scenario.unit, eventgraph: $0.eventGraph, grdb: $0.grdb,
                ratio: $0.ratio)
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(entries)
    }

    /// A horizontal bar per scenario on a log scale centred on 1 (parity): green bars to the right where
    /// EventGraph is better, red to the left where it is worse; a tick marks the issue's goal where it is a ratio.
    static func svg(_ results: [ScenarioResult], subtitle: String) -> String {
        let labelWidth = 190.0
        let plotWidth = 560.0
        let rowHeight = 26.0
        let top = 64.0
        let height = top + rowHeight * Double(results.count) + 50
        let width = labelWidth + plotWidth + 90
        // The axis spans powers of ten covering every ratio and goal.
        let logs = results.flatMap { r in [r.ratio, r.scenario.goalRatio ?? 1].filter { $0 > 0 }.map { log10($0) } }
        let lowest = min(-1, floor(logs.min() ?? -1))
        let highest = max(1, ceil(logs.max() ?? 1))
        func x(_ ratio: Double) -> Double {
            labelWidth + (log10(max(ratio, pow(10, lowest))) - lowest) / (highest - lowest) * plotWidth
        }
        func escape(_ text: String) -> String {
            text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
                .replacingOccurrences(of: ">", with: "&gt;")
        }
        var svg = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" \
            viewBox="0 0 \(Int(width)) \(Int(height))" font-family="Helvetica, Arial, sans-serif" font-size="12">
            <rect width="100%" height="100%" fill="white"/>
            <text x="\(labelWidth)" y="22" font-size="15" font-weight="bold">EventGraph vs SQLite (GRDB): ratio, &gt; 1 = EventGraph better</text>
            <text x="\(labelWidth)" y="40" fill="#555">\(escape(subtitle))</text>

            """
        var power = lowest
        while power <= highest {
            let position = x(pow(10, power))
            let label = power >= 0 ? String(format: "%.0f×", pow(10, power)) : String(format: "%g×", pow(10, power))
            svg += """
                <line x1="\(position)" y1="\(top - 6)" x2="\(position)" y2="\(height - 40)" stroke="\(power == 0 ? "#000" : "#ddd")"/>
                <text x="\(position)" y="\(height - 24)" text-anchor="middle" fill="#555">\(label)</text>

                """
            power += 1
        }
        for (row, result) in results.enumerated() {
            let y = top + Double(row) * rowHeight
            let ratio = max(result.ratio, pow(10, lowest))
            let start = min(x(1), x(ratio))
            let barWidth = max(1, abs(x(ratio) - x(1)))
            let color = result.ratio >= 1 ? "#2e9d4b" : "#d0453b"
            svg += """
                <text x="\(labelWidth - 8)" y="\(y + 16)" text-anchor="end">\(escape(result.scenario.key))</text>
                <rect x="\(start)" y="\(y + 4)" width="\(barWidth)" height="\(rowHeight - 8)" fill="\(color)"/>
                <text x="\(result.ratio >= 1 ? x(ratio) + 4 : start - 4)" y="\(y + 16)" \
                text-anchor="\(result.ratio >= 1 ? "start" : "end")" fill="#222">\(ratioText(result.ratio))</text>

                """
            if let goal = result.scenario.goalRatio {
                svg += """
                    <line x1="\(x(goal))" y1="\(y + 1)" x2="\(x(goal))" y2="\(y + rowHeight - 1)" stroke="#000" stroke-width="2" stroke-dasharray="3,2"/>

                    """
            }
        }
        svg += """
            <text x="\(labelWidth)" y="\(height - 6)" fill="#555">log scale; dashed tick = the issue's goal where it is a ratio</text>
            </svg>

            """
        return svg
    }
}

/// A ratio with two decimals, or two significant digits when it is below 0.1 (0.0027, not 0.00).
func ratioText(_ ratio: Double) -> String {
    ratio >= 0.1 || ratio == 0 ? String(format: "%.2f", ratio) : String(format: "%.2g", ratio)
}
