/// Durations in the units GLib and GStreamer count in.
extension Duration {
    /// The duration in seconds as a Double.
    package var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }

    /// Whole nanoseconds (GStreamer's clock unit), truncated.
    package var nanoseconds: Int64 {
        components.seconds * 1_000_000_000 + components.attoseconds / 1_000_000_000
    }

    /// Whole milliseconds rounded up, for GLib timeouts: a timer that fires a little early would
    /// only have to be armed again.
    package var millisecondsRoundedUp: Int64 {
        components.seconds * 1000 + (components.attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
    }
}
