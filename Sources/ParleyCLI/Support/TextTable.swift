import Foundation

/// Rows of text in aligned columns, for listings on a terminal.
struct TextTable {
    /// The column titles.
    var header: [String]
    /// The rows; each has one cell per column.
    var rows: [[String]]

    /// The table as lines, columns two spaces apart, trailing spaces trimmed.
    func render(headerStyle: (String) -> String = { $0 }) -> String {
        let widths = header.indices.map { column in
            ([header] + rows).map { $0.indices.contains(column) ? $0[column].count : 0 }.max() ?? 0
        }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { column, cell in
                column == cells.count - 1 ? cell : cell.padding(toLength: widths[column], withPad: " ", startingAt: 0)
            }.joined(separator: "  ").replacingOccurrences(of: "\\s+$", with: "", options: .regularExpression)
        }
        return ([headerStyle(line(header))] + rows.map(line)).joined(separator: "\n") + "\n"
    }
}
