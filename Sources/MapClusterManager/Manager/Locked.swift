#if canImport(os)
    import os
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A value that threads share, read and changed only while holding its lock.
///
/// The lock is the platform's own: `os_unfair_lock` on Apple's systems (from iOS 10, under the package's floor, where
/// `Synchronization.Mutex` needs iOS 18), a `pthread_mutex_t` elsewhere. A lock held for a few dictionary lookups costs
/// an atomic operation when no other thread wants it, where a serial dispatch queue's `sync` parks and wakes threads.
final class Locked<State>: @unchecked Sendable {
    #if canImport(os)
        private typealias Primitive = os_unfair_lock
    #else
        private typealias Primitive = pthread_mutex_t
    #endif

    private let primitive = UnsafeMutablePointer<Primitive>.allocate(capacity: 1)
    // Guarded by `primitive`.
    private var state: State

    init(_ state: State) {
        self.state = state
        #if canImport(os)
            primitive.initialize(to: os_unfair_lock())
        #else
            primitive.initialize(to: pthread_mutex_t())
            pthread_mutex_init(primitive, nil)
        #endif
    }

    deinit {
        #if !canImport(os)
            pthread_mutex_destroy(primitive)
        #endif
        primitive.deinitialize(count: 1)
        primitive.deallocate()
    }

    /// Runs `body` on the state, holding the lock.
    func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
        #if canImport(os)
            os_unfair_lock_lock(primitive)
            defer { os_unfair_lock_unlock(primitive) }
        #else
            pthread_mutex_lock(primitive)
            defer { pthread_mutex_unlock(primitive) }
        #endif
        return try body(&state)
    }
}
