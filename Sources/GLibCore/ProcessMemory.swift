internal import CGLib

/// The process heap under a media workload.
///
/// Every call starts a few dozen GStreamer streaming threads (sources, queues, ICE, DTLS, SCTP,
/// encoders) and stops them at its end. glibc gives threads their own malloc arenas (up to eight
/// per core) and keeps what they freed there, in the middle of the arena's heap, where it is never
/// returned to the system on its own: a long-running bot's resident memory then grows with every
/// call although nothing is leaked (an agent bot measured 66 → 84 MiB over 30 calls;
/// Tests/CLITests/AgentMemoryTests.swift).
package enum ProcessMemory {
    /// Hands the free pages of every malloc arena back to the system (`malloc_trim(0)`, which since
    /// glibc 2.8 also releases whole free pages inside a heap, not only at its top). Costs a pass
    /// over the arenas' free lists, a few milliseconds: call it when a call has been torn down,
    /// not per frame.
    package static func releaseFreedMemory() {
        _ = malloc_trim(0)
    }

    /// At most `count` malloc arenas for the process's threads (`mallopt(M_ARENA_MAX)`); call it
    /// first thing, before threads start. Fewer arenas spread freed memory over fewer heaps.
    @discardableResult
    package static func limitArenas(to count: Int) -> Bool {
        mallopt(M_ARENA_MAX, Int32(clamping: count)) == 1
    }
}
