/// The distribution of a set of per-frame measurements, in milliseconds.
///
/// Percentiles use the nearest-rank method (the smallest sample with at least p% of the samples
/// at or below it): every reported value is one that was really measured, never interpolated.
package struct LatencySummary: Codable, Sendable, Equatable {
    package var count: Int
    package var p50: Double
    package var p95: Double
    package var p99: Double
    package var min: Double
    package var max: Double
    package var mean: Double
    /// Population standard deviation.
    package var standardDeviation: Double

    /// Nil for no samples: an empty measurement has no median to report.
    package init?(milliseconds samples: [Double]) {
        guard !samples.isEmpty else { return nil }
        let sorted = samples.sorted()
        func rank(_ percent: Double) -> Double {
            let index = Int((percent / 100 * Double(sorted.count)).rounded(.up)) - 1
            return sorted[Swift.min(Swift.max(index, 0), sorted.count - 1)]
        }
        count = sorted.count
        p50 = rank(50)
        p95 = rank(95)
        p99 = rank(99)
        min = sorted.first!
        max = sorted.last!
        mean = sorted.reduce(0, +) / Double(sorted.count)
        let meanValue = mean
        standardDeviation = (sorted.reduce(0) { $0 + ($1 - meanValue) * ($1 - meanValue) } / Double(sorted.count)).squareRoot()
    }

    package init?(nanoseconds samples: [UInt64]) {
        self.init(milliseconds: samples.map { Double($0) / 1e6 })
    }
}

/// The median of a few repeated figures (e.g. ratios of repeated runs), with their range.
package struct Spread: Codable, Sendable, Equatable {
    package var median: Double
    package var min: Double
    package var max: Double
    package var values: [Double]

    package init?(_ values: [Double]) {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        let middle = sorted.count / 2
        median = sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
        min = sorted.first!
        max = sorted.last!
        self.values = values
    }
}
