/// Small inline SVG charts. Every label that comes from data goes through `HTMLText.plain`; numbers are
/// formatted by us. Colours come from CSS classes (so dark mode and print work); every chart has a text
/// equivalent next to it (a table), so nothing is said by colour alone.
enum SVGChart {
    /// One stacked bar per run: active hits by level, informational at the bottom.
    static func trend(_ runs: [RunHistoryEntry], currentRunID: Int64) -> String {
        let width = 640.0
        let height = 200.0
        let left = 36.0
        let bottom = 24.0
        let top = 10.0
        let plotWidth = width - left - 8
        let plotHeight = height - bottom - top
        let maxTotal = max(1, runs.map(\.total).max() ?? 1)
        let slot = plotWidth / Double(max(runs.count, 1))
        let barWidth = max(2, slot * 0.7)
        var out =
            "<svg class=\"chart\" viewBox=\"0 0 \(num(width)) \(num(height))\" role=\"img\" aria-labelledby=\"trend-title\">"
        out += "<title id=\"trend-title\">Active hits by level over the last \(runs.count) runs</title>"
        out += axis(left: left, top: top, plotWidth: plotWidth, plotHeight: plotHeight, maxValue: maxTotal)
        for (index, run) in runs.enumerated() {
            let x = left + Double(index) * slot + (slot - barWidth) / 2
            var y = top + plotHeight
            var parts: [String] = []
            out += "<g>"
            for level in Finding.Level.allCases {
                let count = run.count(level)
                guard count > 0 else { continue }
                let h = plotHeight * Double(count) / Double(maxTotal)
                y -= h
                out +=
                    "<rect class=\"fill-\(level.rawValue)\" x=\"\(num(x))\" y=\"\(num(y))\" width=\"\(num(barWidth))\" height=\"\(num(h))\"></rect>"
                parts.append("\(count) \(level.rawValue)")
            }
            let label = "run \(run.runID): " + (parts.isEmpty ? "no hits" : parts.reversed().joined(separator: ", "))
            out += "<title>\(HTMLText.escape(label))</title></g>"
            let cls = run.runID == currentRunID ? "axis current" : "axis"
            out +=
                "<text class=\"\(cls)\" x=\"\(num(x + barWidth / 2))\" y=\"\(num(height - 8))\" text-anchor=\"middle\">\(run.runID)</text>"
        }
        out += "</svg>"
        return out
    }

    /// A tiny bar sparkline of one rule's active hits over runs.
    static func sparkline(_ values: [Int], label: String) -> String {
        let width = 160.0
        let height = 28.0
        let maxValue = max(1, values.max() ?? 1)
        let slot = width / Double(max(values.count, 1))
        var out =
            "<svg class=\"spark\" viewBox=\"0 0 \(num(width)) \(num(height))\" role=\"img\" aria-label=\"\(HTMLText.escape(label))\">"
        out +=
            "<line class=\"grid\" x1=\"0\" y1=\"\(num(height - 0.5))\" x2=\"\(num(width))\" y2=\"\(num(height - 0.5))\"></line>"
        for (index, value) in values.enumerated() where value > 0 {
            let h = max(1.5, (height - 2) * Double(value) / Double(maxValue))
            out +=
                "<rect class=\"fill-bar\" x=\"\(num(Double(index) * slot + slot * 0.15))\" y=\"\(num(height - h))\" width=\"\(num(slot * 0.7))\" height=\"\(num(h))\"><title>\(value)</title></rect>"
        }
        out += "</svg>"
        return out
    }

    /// Horizontal bars: label → value (milliunits), largest first; labels are untrusted.
    static func horizontalBars(_ items: [(label: String, value: Int64)], title: String, unit: String) -> String {
        let rowHeight = 22.0
        let labelWidth = 140.0
        let width = 640.0
        let height = rowHeight * Double(max(items.count, 1)) + 8
        let maxValue = max(1, items.map(\.value).max() ?? 1)
        let plotWidth = width - labelWidth - 110
        var out =
            "<svg class=\"chart\" viewBox=\"0 0 \(num(width)) \(num(height))\" role=\"img\" aria-label=\"\(HTMLText.escape(title))\">"
        for (index, item) in items.enumerated() {
            let y = 4 + Double(index) * rowHeight
            let w = max(1, plotWidth * Double(max(item.value, 0)) / Double(maxValue))
            out +=
                "<text class=\"axis\" x=\"\(num(labelWidth - 6))\" y=\"\(num(y + 15))\" text-anchor=\"end\">\(HTMLText.plain(item.label, maxCharacters: 12))</text>"
            out +=
                "<rect class=\"fill-bar\" x=\"\(num(labelWidth))\" y=\"\(num(y + 3))\" width=\"\(num(w))\" height=\"\(num(rowHeight - 6))\"></rect>"
            out +=
                "<text class=\"axis\" x=\"\(num(labelWidth + w + 6))\" y=\"\(num(y + 15))\">\(HTMLText.escape(ReportFormat.decimal(milliunits: item.value) + " " + unit))</text>"
        }
        out += "</svg>"
        return out
    }

    /// A histogram of counts per bin with a vertical marker line at `markerBin` (a bin boundary index).
    static func histogram(
        _ bins: [(label: String, count: Int)], markerBoundary: Int?, markerLabel: String, title: String
    ) -> String {
        let width = 640.0
        let height = 200.0
        let left = 36.0
        let bottom = 30.0
        let top = 16.0
        let plotWidth = width - left - 8
        let plotHeight = height - bottom - top
        let maxCount = max(1, bins.map(\.count).max() ?? 1)
        let slot = plotWidth / Double(max(bins.count, 1))
        var out =
            "<svg class=\"chart\" viewBox=\"0 0 \(num(width)) \(num(height))\" role=\"img\" aria-label=\"\(HTMLText.escape(title))\">"
        out += axis(left: left, top: top, plotWidth: plotWidth, plotHeight: plotHeight, maxValue: maxCount)
        for (index, bin) in bins.enumerated() {
            let x = left + Double(index) * slot
            if bin.count > 0 {
                let h = plotHeight * Double(bin.count) / Double(maxCount)
                out +=
                    "<rect class=\"fill-bar\" x=\"\(num(x + slot * 0.1))\" y=\"\(num(top + plotHeight - h))\" width=\"\(num(slot * 0.8))\" height=\"\(num(h))\"><title>\(HTMLText.escape(bin.label + ": \(bin.count)"))</title></rect>"
            }
            if index % 2 == 0 {
                out +=
                    "<text class=\"axis\" x=\"\(num(x))\" y=\"\(num(height - 14))\" text-anchor=\"middle\">\(HTMLText.escape(String(bin.label.prefix(while: { $0 != "–" }))))</text>"
            }
        }
        if let markerBoundary {
            let x = left + Double(markerBoundary) * slot
            out +=
                "<line class=\"marker\" x1=\"\(num(x))\" y1=\"\(num(top - 6))\" x2=\"\(num(x))\" y2=\"\(num(top + plotHeight))\"></line>"
            out +=
                "<text class=\"axis\" x=\"\(num(x + 4))\" y=\"\(num(top + 2))\">\(HTMLText.escape(markerLabel))</text>"
        }
        out += "</svg>"
        return out
    }

    private static func axis(left: Double, top: Double, plotWidth: Double, plotHeight: Double, maxValue: Int) -> String
    {
        let baseY = top + plotHeight
        var out =
            "<line class=\"grid\" x1=\"\(num(left))\" y1=\"\(num(baseY))\" x2=\"\(num(left + plotWidth))\" y2=\"\(num(baseY))\"></line>"
        out +=
            "<line class=\"grid\" x1=\"\(num(left))\" y1=\"\(num(top))\" x2=\"\(num(left + plotWidth))\" y2=\"\(num(top))\"></line>"
        out += "<text class=\"axis\" x=\"\(num(left - 4))\" y=\"\(num(baseY))\" text-anchor=\"end\">0</text>"
        out +=
            "<text class=\"axis\" x=\"\(num(left - 4))\" y=\"\(num(top + 4))\" text-anchor=\"end\">\(maxValue)</text>"
        return out
    }

    /// A coordinate with at most one decimal, deterministic.
    static func num(_ value: Double) -> String {
        let tenths = Money.rounded(value * 10) ?? 0
        let whole = tenths / 10
        let fraction = (tenths % 10).magnitude
        if fraction == 0 { return String(whole) }
        return (tenths < 0 && whole == 0 ? "-" : "") + String(whole) + "." + String(fraction)
    }
}
