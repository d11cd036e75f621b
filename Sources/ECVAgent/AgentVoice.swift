import ECV
import Foundation
import Synchronization

/// A bot's voice and ears for `AgentScript`: a synthesizer for `say`, a transcriber for `listen`
/// and `on "…"` (e.g. `ECVSpeech`'s espeak-ng and pocketsphinx, or the app's own), the voice
/// activity detector's settings, and whether the caller speaking interrupts the bot (barge-in).
/// The bot's calls need `MediaParameters.applicationAudio`.
public struct AgentVoice: Sendable {
    public var synthesizer: any SpeechSynthesizer
    public var transcriber: any Transcriber
    public var voiceActivity: VoiceActivityOptions
    public var bargeIn: Bool

    public init(synthesizer: any SpeechSynthesizer, transcriber: any Transcriber, voiceActivity: VoiceActivityOptions = .standard,
                bargeIn: Bool = true) {
        self.synthesizer = synthesizer
        self.transcriber = transcriber
        self.voiceActivity = voiceActivity
        self.bargeIn = bargeIn
    }

    /// Starts listening on `call` (and barge-in when asked); nil when the call's media cannot be
    /// listened to, which `report` says.
    func listen(on call: AgentCall, report: @escaping @Sendable (String) -> Void) async -> AgentEars? {
        do throws(AppMediaError) {
            if bargeIn { try await call.setBargeIn(voiceActivity) }
            let heard = try await call.listen(with: transcriber, options: voiceActivity)
            return AgentEars(heard, report: report)
        } catch {
            report("voice: \(error)")
            return nil
        }
    }
}

/// What a script's bot has heard: utterances in order, waited for by `listen`, the last one
/// matched by `on` steps.
final class AgentEars: Sendable {
    private struct State {
        var utterances: [Transcript] = []
        var last: Transcript?
        var speechStarts = 0
        var ended = false
        /// The script's one wait in progress, woken by every change (and by its deadline).
        var waiter: CheckedContinuation<Void, Never>?
    }
    /// Utterances kept unread at most (a caller talking over a long script).
    static let backlog = 32
    private let state = Mutex(State())
    private let task: Mutex<Task<Void, Never>?> = Mutex(nil)

    init(_ heard: AsyncStream<Heard>, report: @escaping @Sendable (String) -> Void) {
        let follow = Task { [weak self] in
            for await event in heard {
                guard let self else { return }
                switch event {
                case .activity(.started):
                    self.state.withLock { $0.speechStarts += 1 }
                    self.wake()
                case .transcript(let transcript) where transcript.isFinal:
                    report("caller said \"\(transcript.text)\" (\(Self.seconds(transcript.end - transcript.start)) s)")
                    self.state.withLock { state in
                        state.utterances.append(transcript)
                        if state.utterances.count > Self.backlog { state.utterances.removeFirst() }
                    }
                    self.wake()
                default:
                    continue
                }
            }
            self?.state.withLock { $0.ended = true }
            self?.wake()
        }
        task.withLock { $0 = follow }
    }

    static func seconds(_ nanoseconds: UInt64) -> String { String(format: "%.2f", Double(nanoseconds) / 1e9) }

    /// The utterance the last `listen` returned.
    var lastHeard: Transcript? { state.withLock { $0.last } }

    /// The next utterance not yet read, waiting up to `within`.
    func nextUtterance(within: Duration) async -> Transcript? {
        let deadline = ContinuousClock.now + within
        while true {
            let (next, ended) = state.withLock { state -> (Transcript?, Bool) in
                guard !state.utterances.isEmpty else { return (nil, state.ended) }
                let next = state.utterances.removeFirst()
                state.last = next
                return (next, false)
            }
            if let next { return next }
            if ended || ContinuousClock.now >= deadline || Task.isCancelled { break }
            await waitForChange(until: deadline) { !$0.utterances.isEmpty || $0.ended }
        }
        state.withLock { $0.last = nil }
        return nil
    }

    /// Waits for the caller to start speaking (after this call), up to `within`.
    func speechStarted(within: Duration) async -> Bool {
        let before = state.withLock { $0.speechStarts }
        let deadline = ContinuousClock.now + within
        while true {
            if state.withLock({ $0.speechStarts }) > before { return true }
            if ContinuousClock.now >= deadline || Task.isCancelled { return false }
            await waitForChange(until: deadline) { $0.speechStarts > before || $0.ended }
        }
    }

    /// Returns once `ready` holds (checked under the lock as the wait begins, so no change is
    /// missed), something changed, or `deadline` passed.
    private func waitForChange(until deadline: ContinuousClock.Instant, ready: @escaping @Sendable (State) -> Bool) async {
        let timer = Task { [weak self] in
            // Cancelled: the wait ended first; nothing to wake.
            guard (try? await Task.sleep(until: deadline, clock: .continuous)) != nil else { return }
            self?.wake()
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state -> Bool in
                if ready(state) { return true }
                state.waiter?.resume()
                state.waiter = continuation
                return false
            }
            if now { continuation.resume() }
        }
        timer.cancel()
    }

    private func wake() { state.withLock { state in defer { state.waiter = nil }; return state.waiter }?.resume() }

    func stop() { task.withLock { $0 }?.cancel() }
}
