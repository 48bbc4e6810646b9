import Foundation
import LiveAuth
import LiveCore
import LiveRTMP
import Synchronization

/// A URL a token can be put on, as `?token=` in its query.
protocol TokenQueryURL: Sendable {
    var query: String? { get set }
}

extension RTMPURL: TokenQueryURL {}
extension PlayURL: TokenQueryURL {}

/// Puts a fresh token from a `TokenProvider` on an RTMP or HTTP-FLV URL before each
/// connect and reconnect, as `?token=` on the stream name (what `liveline serve
/// --auth-secret-file`, nginx-rtmp's and SRS's hooks read; the relay's HTTP routes
/// read it there too).
struct StreamTokenSource: Sendable {
    let provider: TokenProvider

    /// `url` with a fresh token, waiting at most `timeout` for the provider. Blocks the
    /// caller, so never call it on an event loop.
    func url<URL: TokenQueryURL>(for url: URL, timeout: Duration) throws -> URL {
        let answer = Answer<URL>()
        let done = DispatchSemaphore(value: 0)
        fetch(for: url) { result in
            answer.set(result)
            done.signal()
        }
        let (seconds, attoseconds) = timeout.components
        let wait = Double(seconds) + Double(attoseconds) / 1e18
        guard done.wait(timeout: .now() + wait) == .success, let result = answer.result else {
            throw LiveError(.authTimeout, "the token provider gave no token within \(timeout)")
        }
        return try result.get()
    }

    /// `url` with a fresh token, handed to `completion` on a task's thread (the caller
    /// hops back to its loop); a provider error arrives as a `LiveError` (202).
    func fetch<URL: TokenQueryURL>(for url: URL, completion: @escaping @Sendable (Result<URL, LiveError>) -> Void) {
        let provider = self.provider
        // Off the cooperative pool: `url(for:timeout:)` blocks its caller, which may itself
        // be one of the pool's few threads (a kit started from async code).
        Task(executorPreference: ProviderExecutor.shared) {
            do {
                let issued = try await provider()
                var withToken = url
                withToken.query = AccessToken.query(url.query, setting: issued.token)
                completion(.success(withToken))
            } catch let error as LiveError {
                completion(.failure(error))
            } catch {
                completion(.failure(LiveError(.authFailed, "the token provider failed: \(error)")))
            }
        }
    }

    /// The provider's answer, set once from the task.
    private final class Answer<URL: TokenQueryURL>: Sendable {
        private let stored = Mutex<Result<URL, LiveError>?>(nil)

        func set(_ result: Result<URL, LiveError>) {
            stored.withLock { $0 = result }
        }

        var result: Result<URL, LiveError>? {
            stored.withLock { $0 }
        }
    }
}

/// Runs token providers' jobs on Dispatch's global queue instead of the cooperative pool,
/// so a caller blocked waiting for a token cannot starve the provider (the line session
/// runs its providers here too).
final class ProviderExecutor: TaskExecutor {
    static let shared = ProviderExecutor()

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        DispatchQueue.global().async { job.runSynchronously(on: executor) }
    }
}
