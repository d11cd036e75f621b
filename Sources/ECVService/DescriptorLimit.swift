import Glibc

/// The process's limit on open descriptors (`RLIMIT_NOFILE`), which every connection, socket and
/// file counts against. Distributions often set the soft limit to 1,024 with a far higher hard
/// limit; a service at the soft limit fails to accept while clients wait (issue #34: 1,224 idle
/// connections from one client failed half the health checks). The service raises the soft
/// limit to the hard one when it starts (an unprivileged process may), and says so in its log.
enum DescriptorLimit {
    /// Below this the start-up log warns: some 4 descriptors per live call (queue socket, two
    /// collider sockets, the room's HTTP requests) plus agents and waiting connections.
    static let recommended = 4096

    /// Raises the soft limit to the hard limit; returns the limit in force and the one before
    /// (equal when there was nothing to raise, or raising failed).
    static func raiseToHardLimit() -> (now: Int, before: Int) {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return (0, 0) }
        let before = Int(clamping: limit.rlim_cur)
        guard limit.rlim_cur < limit.rlim_max else { return (before, before) }
        var raised = limit
        raised.rlim_cur = limit.rlim_max
        guard setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 else { return (before, before) }
        return (Int(clamping: raised.rlim_cur), before)
    }

    /// The start-up log line.
    static func logLine(now: Int, before: Int) -> String {
        let raised = now > before ? " (raised from \(before))" : ""
        let warning = now < recommended ? "; below \(recommended): raise the hard limit (ulimit -Hn, LimitNOFILE=) for busy services" : ""
        return "descriptor limit \(now)\(raised)\(warning)"
    }
}
