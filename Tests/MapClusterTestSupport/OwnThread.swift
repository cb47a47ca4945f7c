import Foundation

/// Runs `body` on a thread of its own, off the cooperative pool, and returns what it returns.
///
/// For a test that waits minutes on a child process: a synchronous test would hold one of the pool's threads (two, on
/// two cores) all that time, and starve the async tests beside it; an async test that polled would wake only when the
/// pool had a thread free, which beside the whole suite was too late to see what it watched for.
public func onOwnThread<Value: Sendable>(_ body: @escaping @Sendable () throws -> Value) async throws -> Value {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}
