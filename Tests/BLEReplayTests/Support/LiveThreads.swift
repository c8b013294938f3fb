import Foundation
import Testing

/// Threads of their own for the live tests (Bumble, RootCanal, a twin): a test that waits on child
/// processes in many short steps (poll for `READY`, run a replay, poll for its end) needs a thread
/// after each step. On Swift Testing's pool (a thread per core) those threads are held for seconds
/// at a time by synchronous tests that run the CLI, so each step waited behind them: alone these
/// suites take ~30 s, in a full run they ended last, after ~250 s, near their time limits. With
/// this trait every job of the test (and of its child tasks, and of default actors it calls)
/// runs here instead (SE-0417 task executor preference).
struct LiveThreads: SuiteTrait, TestTrait, TestScoping {
    var isRecursive: Bool { true }

    /// Every level, the suite's own included (by default a trait scopes test cases only): the suite's
    /// tests then start here when the run starts, instead of queueing behind the synchronous tests.
    func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? { self }

    func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        try await withTaskExecutorPreference(LiveExecutor.shared) { try await function() }
    }
}

extension Trait where Self == LiveThreads {
    /// The test runs on `LiveExecutor.shared`, not on the pool the synchronous tests hold.
    static var liveThreads: Self { LiveThreads() }
}

/// A task executor with a few threads of its own, taking jobs in the order they come. The work on
/// them is light (start a process, read its lines, parse JSON); the count only covers the few
/// blocking calls (a tshark run, `waitUntilExit`, a connect with a timeout) made by several
/// tests at once.
final class LiveExecutor: TaskExecutor, @unchecked Sendable {   // safe: `jobs` is guarded by `condition`
    static let shared = LiveExecutor(threads: 4)

    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var head = 0

    init(threads: Int) {
        for i in 0 ..< threads {
            let thread = Thread { [unowned self] in self.work() }
            thread.name = "live-\(i)"
            thread.start()
        }
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    private func work() {
        while true {
            condition.lock()
            while head == jobs.count { condition.wait() }
            let job = jobs[head]
            head += 1
            if head > 1024, head * 2 > jobs.count { jobs.removeFirst(head); head = 0 }
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}
