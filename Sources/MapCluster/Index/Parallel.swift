import Dispatch

/// Data parallelism for bulk loads and large batches: every thread the engine uses, it starts here.
///
/// The bulk load's loops that read their input at random (projecting a million coordinates, gathering them into sorted
/// leaves, building the slot table) are bound by memory latency, and two cores halve them; a batch of inserts or
/// removes runs as a two-stage pipeline (slots on one thread, the tree on another). Queries run on the caller's thread.
/// No result depends on how the work is split.
@usableFromInline
enum Parallel {
    /// An array of `count` elements, the *i*-th being `transform(i)`, computed in contiguous chunks on all cores.
    ///
    /// - Parameters:
    ///   - count: The number of elements.
    ///   - minimumChunk: The fewest elements worth a thread of their own; below twice that the map runs on the
    ///     calling thread, where starting threads would cost more than they save.
    ///   - transform: The element at a position; it must be safe to call from several threads at once.
    /// - Returns: The elements, in order.
    @usableFromInline
    static func map<T>(count: Int, minimumChunk: Int = 32_768, _ transform: @Sendable (Int) -> T) -> ContiguousArray<T>
    {
        ContiguousArray(unsafeUninitializedCapacity: count) { buffer, initialized in
            let chunks = min(max(count / minimumChunk, 1), 16)
            if chunks == 1 {
                for i in 0..<count { buffer.initializeElement(at: i, to: transform(i)) }
            } else if let start = buffer.baseAddress {
                // Each chunk initializes its own disjoint range of the buffer, and the buffer outlives
                // `concurrentPerform`, which returns when every chunk has: the pointer is not shared
                // between writers, so sending it is safe.
                nonisolated(unsafe) let base = start
                DispatchQueue.concurrentPerform(iterations: chunks) { chunk in
                    for i in (count * chunk / chunks)..<(count * (chunk + 1) / chunks) {
                        (base + i).initialize(to: transform(i))
                    }
                }
            }
            initialized = count
        }
    }

    /// Runs two pieces of work at once: the first changes `state` in place (so a buffer in it stays
    /// uniquely referenced and is not copied), the second returns a result.
    @usableFromInline
    static func both<State, Result>(
        updating state: inout State, _ first: @Sendable (inout State) -> Void, _ second: @Sendable () -> Result
    ) -> Result {
        var result: Result?
        withUnsafeMutablePointer(to: &state) { state in
            withUnsafeMutablePointer(to: &result) { result in
                // Each pointee has one user, and both outlive `concurrentPerform`, which returns when
                // both parts have run: sending the pointers is safe.
                nonisolated(unsafe) let (state, result) = (state, result)
                DispatchQueue.concurrentPerform(iterations: 2) { part in
                    if part == 0 { first(&state.pointee) } else { result.pointee = second() }
                }
            }
        }
        guard let result else { preconditionFailure("concurrentPerform returned before both parts ran") }
        return result
    }

    /// Runs `produce` for each of `count` steps on one thread and `consume` for each step's result on another.
    ///
    /// Each step is consumed as soon as it is produced, in order. The two sides change their own state only.
    ///
    /// The producer never waits, and `concurrentPerform` starts its parts in order, so the pipeline completes even on
    /// one thread: the producer then runs to the end first.
    @usableFromInline
    static func pipeline<Producer, Consumer, Product: Sendable>(
        count: Int, producer: inout Producer, consumer: inout Consumer,
        produce: @Sendable (inout Producer, Int) -> Product, consume: @Sendable (inout Consumer, Product) -> Void
    ) {
        guard count > 0 else { return }
        let handoff = UnsafeMutablePointer<Product?>.allocate(capacity: count)
        handoff.initialize(repeating: nil, count: count)
        defer {
            handoff.deinitialize(count: count)
            handoff.deallocate()
        }
        let ready = DispatchSemaphore(value: 0)
        withUnsafeMutablePointer(to: &producer) { producer in
            withUnsafeMutablePointer(to: &consumer) { consumer in
                // Each pointee has one user at a time: the producer writes step i of `handoff` before signalling,
                // the consumer reads it after waiting, and each side alone touches its own state. All outlive
                // `concurrentPerform`, which returns when both sides have finished: sending the pointers is safe.
                nonisolated(unsafe) let (producer, consumer, handoff) = (producer, consumer, handoff)
                DispatchQueue.concurrentPerform(iterations: 2) { part in
                    if part == 0 {
                        for step in 0..<count {
                            handoff[step] = produce(&producer.pointee, step)
                            ready.signal()
                        }
                    } else {
                        for step in 0..<count {
                            ready.wait()
                            guard let product = handoff[step].take() else {
                                preconditionFailure("a step was not produced")
                            }
                            consume(&consumer.pointee, product)
                        }
                    }
                }
            }
        }
    }
}
