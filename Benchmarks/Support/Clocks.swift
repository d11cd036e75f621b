import GLibCore
import Glibc

// The benchmarks read the kernel's clocks directly: they need CLOCK_MONOTONIC timestamps that are
// comparable across threads and getrusage CPU times. Glibc is the platform C library, not one of
// the project's C modules; only benchmark programs use it this way.

/// Nanoseconds on CLOCK_MONOTONIC: never jumps, shared by every thread of the process.
package enum MonotonicClock {
    package static func nanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }

    /// Sleeps until `deadline` (CLOCK_MONOTONIC nanoseconds); returns at once when it has passed.
    package static func sleep(until deadline: UInt64) {
        var target = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &target, nil) == EINTR {}
    }
}

/// User plus system CPU time, in nanoseconds.
package struct CPUTime: Sendable, Equatable {
    package var user: UInt64
    package var system: UInt64
    package var total: UInt64 { user + system }

    package init(user: UInt64, system: UInt64) {
        self.user = user
        self.system = system
    }

    init(_ usage: rusage) {
        user = Self.nanoseconds(usage.ru_utime)
        system = Self.nanoseconds(usage.ru_stime)
    }

    /// The CPU time of every thread of this process so far.
    package static func ofThisProcess() -> CPUTime {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return CPUTime(usage)
    }

    package static func - (lhs: CPUTime, rhs: CPUTime) -> CPUTime {
        CPUTime(user: lhs.user &- rhs.user, system: lhs.system &- rhs.system)
    }

    private static func nanoseconds(_ time: timeval) -> UInt64 {
        UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_usec) * 1000
    }
}

/// Progress output: one line, flushed at once so a piped log shows where a long run is.
package func progress(_ line: String) {
    print(line)
    fflush(nil)
}
