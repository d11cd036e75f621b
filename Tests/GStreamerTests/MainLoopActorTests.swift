import Testing
import Synchronization
import GLibCore

/// What each submitter's jobs appended, in the order the actor ran them.
@MainLoopActor
private final class RunLog {
    var order: [Int: [Int]] = [:]
    var onLoopThread = true

    func append(submitter: Int, _ index: Int) {
        onLoopThread = onLoopThread && MainLoop.shared.isCurrentThread
        order[submitter, default: []].append(index)
    }
}

@MainLoopActor
private func isOnLoopThread() -> Bool { MainLoop.shared.isCurrentThread }

@Suite struct MainLoopActorTests {
    @Test func isolatedCodeRunsOnTheLoopThread() async {
        #expect(await isOnLoopThread())
        #expect(await MainLoopActor.run { MainLoop.shared.isCurrentThread })
        #expect(!MainLoop.shared.isCurrentThread)
    }

    /// A GLib callback (here a main-loop timer) runs on the loop thread outside any job and may
    /// enter the actor synchronously; the actor's own timers do that for their bodies.
    @Test func aGLibCallbackEntersTheActor() async {
        let entered = OneShot<Bool, Never>(), fired = OneShot<Bool, Never>()
        MainLoop.shared.schedule(after: .milliseconds(1)) {
            entered.resolve(.success(MainLoopActor.assumeIsolated { isOnLoopThread() }))
        }
        MainLoopActor.schedule(after: .milliseconds(1)) { fired.resolve(.success(isOnLoopThread())) }
        #expect(await entered.value())
        #expect(await fired.value())
    }

    /// Eight submitters at once, each enqueueing its jobs without waiting (tasks isolated to the
    /// actor, `perform`) or awaiting each hop: every submitter's jobs run in the order submitted.
    @Test func concurrentHopsKeepEachSubmittersOrder() async {
        let log = RunLog()
        let perSubmitter = 300
        await withTaskGroup(of: Void.self) { group in
            for submitter in 0..<8 {
                group.addTask {
                    switch submitter % 3 {
                    case 0:
                        var tasks: [Task<Void, Never>] = []
                        for index in 0..<perSubmitter {
                            tasks.append(Task { @MainLoopActor in log.append(submitter: submitter, index) })
                        }
                        for task in tasks { await task.value }
                    case 1:
                        for index in 0..<perSubmitter {
                            MainLoopActor.perform { log.append(submitter: submitter, index) }
                        }
                        await MainLoopActor.run { log.append(submitter: submitter, perSubmitter) }
                    default:
                        for index in 0..<perSubmitter { await log.append(submitter: submitter, index) }
                    }
                }
            }
        }
        let (order, onLoopThread) = await MainLoopActor.run { (log.order, log.onLoopThread) }
        #expect(onLoopThread)
        for submitter in 0..<8 {
            let expected = Array(0..<(submitter % 3 == 1 ? perSubmitter + 1 : perSubmitter))
            #expect(order[submitter] == expected, "submitter \(submitter)")
        }
    }
}
