/// Sorts keys in place, least significant digit first, carrying a 32-bit payload (the input position)
/// along: O(*n*) where a comparison sort of a million keys is O(*n* log *n*). Stable, so equal keys keep
/// their input order. Digits that every key shares are skipped, which makes clustered data cheap.
enum RadixSort {
    static let digitBits = 11

    static func sort(keys: inout [UInt64], payloads: inout [UInt32]) {
        precondition(keys.count == payloads.count, "every key needs a payload")
        let n = keys.count
        guard n > 1 else { return }
        let buckets = 1 << digitBits
        let mask = UInt64(buckets - 1)
        var scratchKeys = [UInt64](repeating: 0, count: n)
        var scratchPayloads = [UInt32](repeating: 0, count: n)
        var counts = [Int](repeating: 0, count: buckets)
        var shift = 0
        while shift < 64 {
            defer { shift += digitBits }
            let moved: Bool = keys.withUnsafeBufferPointer { keys in
                counts.withUnsafeMutableBufferPointer { counts in
                    for i in 0..<buckets { counts[i] = 0 }
                    for key in keys { counts[Int((key >> UInt64(shift)) & mask)] += 1 }
                    if counts.contains(n) { return false }  // every key has this digit: nothing moves
                    var total = 0
                    for i in 0..<buckets {
                        let c = counts[i]
                        counts[i] = total
                        total += c
                    }
                    payloads.withUnsafeBufferPointer { payloads in
                        scratchKeys.withUnsafeMutableBufferPointer { outKeys in
                            scratchPayloads.withUnsafeMutableBufferPointer { outPayloads in
                                for i in 0..<n {
                                    let key = keys[i]
                                    let digit = Int((key >> UInt64(shift)) & mask)
                                    let target = counts[digit]
                                    counts[digit] = target + 1
                                    outKeys[target] = key
                                    outPayloads[target] = payloads[i]
                                }
                            }
                        }
                    }
                    return true
                }
            }
            if moved {
                swap(&keys, &scratchKeys)
                swap(&payloads, &scratchPayloads)
            }
        }
    }
}
