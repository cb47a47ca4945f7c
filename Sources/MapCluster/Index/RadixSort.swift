/// Sorts 64-bit keys, optionally carrying a 32-bit payload along, by most-significant-digit radix
/// sort: an 11-bit digit and then 8-bit ones, a buffer the size of the input, and insertion sort for small buckets.
///
/// Stable, so equal keys keep their input order.
///
/// Most-significant first suits keys that are spread out: a million Morton keys take one scatter over main memory,
/// after which every bucket (about 500 keys) sorts in cache. A digit that every key of a bucket shares costs one
/// counting pass and no move, which makes clustered data cheap.
///
/// This is the one place in the core that uses unsafe pointers: the sort's inner loops, measured (`mapcluster bench
/// --workload load-1M-uniform`), are where the bulk load spends its time.
@usableFromInline
enum RadixSort {
    /// The first digit is wide, so that after one pass over main memory the buckets are small; the
    /// digits after it are narrow, so that their counting arrays stay cheap for small buckets.
    static let firstDigitBits = 11
    static let digitBits = 8
    static let insertionSortLimit = 32

    /// Sorts keys in place, moving each payload with its key.
    @usableFromInline
    static func sort(keys: inout ContiguousArray<UInt64>, payloads: inout ContiguousArray<UInt32>) {
        precondition(keys.count == payloads.count, "every key needs a payload")
        guard keys.count > 1 else { return }
        var scratchKeys = [UInt64](repeating: 0, count: keys.count)
        var scratchPayloads = [UInt32](repeating: 0, count: keys.count)
        keys.withUnsafeMutableBufferPointer { keys in
            payloads.withUnsafeMutableBufferPointer { payloads in
                scratchKeys.withUnsafeMutableBufferPointer { scratchKeys in
                    scratchPayloads.withUnsafeMutableBufferPointer { scratchPayloads in
                        let sorter = Sorter(
                            keys: keys, payloads: payloads, scratchKeys: scratchKeys, scratchPayloads: scratchPayloads)
                        defer { sorter.counts.deallocate() }
                        sorter.sort(0..<keys.count, shift: 64 - firstDigitBits, bits: firstDigitBits)
                    }
                }
            }
        }
    }

    /// Sorts keys in place.
    @usableFromInline
    static func sort(keys: inout ContiguousArray<UInt64>) {
        guard keys.count > 1 else { return }
        var scratchKeys = [UInt64](repeating: 0, count: keys.count)
        keys.withUnsafeMutableBufferPointer { keys in
            scratchKeys.withUnsafeMutableBufferPointer { scratchKeys in
                let sorter = Sorter(keys: keys, payloads: nil, scratchKeys: scratchKeys, scratchPayloads: nil)
                defer { sorter.counts.deallocate() }
                sorter.sort(0..<keys.count, shift: 64 - firstDigitBits, bits: firstDigitBits)
            }
        }
    }

    private struct Sorter {
        let keys: UnsafeMutableBufferPointer<UInt64>
        let payloads: UnsafeMutableBufferPointer<UInt32>?
        let scratchKeys: UnsafeMutableBufferPointer<UInt64>
        let scratchPayloads: UnsafeMutableBufferPointer<UInt32>?
        /// The counting array, reused by every bucket: a plain buffer, so its writes check nothing.
        let counts = UnsafeMutableBufferPointer<Int>.allocate(capacity: 1 << RadixSort.firstDigitBits)

        init(
            keys: UnsafeMutableBufferPointer<UInt64>, payloads: UnsafeMutableBufferPointer<UInt32>?,
            scratchKeys: UnsafeMutableBufferPointer<UInt64>, scratchPayloads: UnsafeMutableBufferPointer<UInt32>?
        ) {
            self.keys = keys
            self.payloads = payloads
            self.scratchKeys = scratchKeys
            self.scratchPayloads = scratchPayloads
        }

        /// Sorts `range` by the bits below `shift + bits`; the bits above are equal in it.
        func sort(_ range: Range<Int>, shift: Int, bits: Int) {
            if range.count <= RadixSort.insertionSortLimit {
                insertionSort(range)
                return
            }
            let buckets = 1 << bits
            let mask = UInt64(buckets - 1)
            let digitShift = UInt64(shift)
            for i in 0..<buckets { counts[i] = 0 }
            for i in range { counts[Int((keys[i] >> digitShift) & mask)] += 1 }
            let next = max(shift - RadixSort.digitBits, 0)
            let nextBits = min(RadixSort.digitBits, shift)
            if counts[0..<buckets].contains(range.count) {
                // Every key has this digit: nothing moves.
                if shift > 0 { sort(range, shift: next, bits: nextBits) }
                return
            }
            var starts = Array(counts[0..<buckets])
            var total = range.lowerBound
            for digit in starts.indices {
                let count = starts[digit]
                starts[digit] = total
                total += count
            }
            let bucketStarts = starts
            for i in range {
                let key = keys[i]
                let digit = Int((key >> digitShift) & mask)
                let target = starts[digit]
                starts[digit] = target + 1
                scratchKeys[target] = key
                if let payloads, let scratchPayloads { scratchPayloads[target] = payloads[i] }
            }
            for i in range { keys[i] = scratchKeys[i] }
            if let payloads, let scratchPayloads { for i in range { payloads[i] = scratchPayloads[i] } }
            guard shift > 0 else { return }
            let bucketCounts = Array(counts[0..<buckets])
            for digit in bucketStarts.indices where bucketCounts[digit] > 1 {
                sort(bucketStarts[digit]..<(bucketStarts[digit] + bucketCounts[digit]), shift: next, bits: nextBits)
            }
        }

        private func insertionSort(_ range: Range<Int>) {
            guard range.count > 1 else { return }
            for i in (range.lowerBound + 1)..<range.upperBound {
                let key = keys[i]
                let payload = payloads?[i]
                var j = i
                while j > range.lowerBound && keys[j - 1] > key {
                    keys[j] = keys[j - 1]
                    if let payloads { payloads[j] = payloads[j - 1] }
                    j -= 1
                }
                keys[j] = key
                if let payloads, let payload { payloads[j] = payload }
            }
        }
    }
}
