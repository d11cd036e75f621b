import Foundation

/// Jittered exponential backoff inside a time window: how the SDK and the agent bot retry a
/// request or reconnect a socket after a transient failure (docs/protocol.md §9).
///
/// The n-th delay (from 0) is `initial · multiplier^n`, capped at `maximum`, then drawn
/// uniformly from `[delay · (1 − jitter), delay]` so that many clients that lost the same server
/// at the same moment do not come back in lockstep ("full jitter" when `jitter` is 1).
package struct Backoff: Sendable, Equatable {
    package var initial: Duration
    package var maximum: Duration
    package var multiplier: Double
    /// 0…1: how much of each delay is random.
    package var jitter: Double

    package init(initial: Duration = .milliseconds(100), maximum: Duration = .seconds(2), multiplier: Double = 2, jitter: Double = 0.5) {
        self.initial = max(.milliseconds(1), initial)
        self.maximum = max(self.initial, maximum)
        self.multiplier = max(1, multiplier)
        self.jitter = min(1, max(0, jitter))
    }

    /// The delay before retry number `attempt` (0: the first retry).
    package func delay(attempt: Int, random: Double = Double.random(in: 0...1)) -> Duration {
        let base = initial.seconds * pow(multiplier, Double(min(max(0, attempt), 30)))
        let capped = min(maximum.seconds, base)
        let drawn = capped * (1 - jitter * min(1, max(0, random)))
        return .milliseconds(Int((drawn * 1000).rounded()))
    }
}

/// What `retrying` reports when it gives up: the last failure and how many attempts were made.
package struct RetriesExhausted<Failure: Error & Sendable>: Error, Sendable, CustomStringConvertible {
    package let last: Failure
    package let attempts: Int
    /// Whether the last failure was one that may not be retried (rather than the window running out).
    package let permanent: Bool

    package var description: String {
        permanent || attempts == 1 ? "\(last)" : "\(last) (after \(attempts) attempts)"
    }
}

/// Runs `operation` until it succeeds, fails with an error `isTransient` calls permanent, or the
/// next attempt would start after `window` from now. Each attempt keeps its own timeout, so the
/// whole takes at most `window` plus one attempt. A cancelled task stops retrying at once.
package func retrying<Success: Sendable, Failure: Error & Sendable>(
    within window: Duration, backoff: Backoff = Backoff(),
    isTransient: (Failure) -> Bool,
    onRetry: (_ failure: Failure, _ attempt: Int, _ delay: Duration) -> Void = { _, _, _ in },
    _ operation: () async throws(Failure) -> Success
) async throws(RetriesExhausted<Failure>) -> Success {
    let deadline = ContinuousClock.now + window
    var attempt = 0
    while true {
        attempt += 1
        do {
            return try await operation()
        } catch {
            let failure = error
            let transient = isTransient(failure)
            let delay = backoff.delay(attempt: attempt - 1)
            guard transient, !Task.isCancelled, ContinuousClock.now + delay < deadline else {
                throw RetriesExhausted(last: failure, attempts: attempt, permanent: !transient)
            }
            onRetry(failure, attempt, delay)
            do { try await Task.sleep(for: delay) } catch {
                // Cancelled while waiting: the caller no longer wants an answer; the failure stands.
                throw RetriesExhausted(last: failure, attempts: attempt, permanent: false)
            }
        }
    }
}
