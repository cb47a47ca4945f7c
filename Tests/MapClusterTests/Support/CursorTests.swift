import MapClusterTestSupport
import Testing

@testable import MapCluster

/// The cursors through which the engine reads and writes memory by address: they reach what was lent, move by offsets,
/// and in a debug build (the tests') stop any access outside the memory lent.
struct CursorTests {
    @Test func aCursorReadsAndWritesAtOffsetsFromWhereItStands() {
        var words: ContiguousArray<UInt64> = [1, 2, 3, 4, 5, 6]
        words.withMutableCursor { row in
            let block = row + 2
            #expect(block[0] == 3 && block[3] == 6)
            block[1] &+= 40
            (row + 4).update(from: row.reading, count: 2)
            #expect(block.reading[1] == 44)
        }
        #expect(words == [1, 2, 3, 44, 1, 2])
        #expect(words.withCursor { ($0 + 3)[0] } == 44)
        #expect(ContiguousArray<UInt64>().withCursorIfAny { $0 == nil })
    }

    @Test func aRunIsTheCollectionItLends() {
        let ranges: [ClosedRange<UInt64>] = [1...2, 5...9, 12...12]
        #expect(ranges.withRun { Array($0) } == ranges)
        #expect(ranges.withRun { $0.count } == 3)
        #expect(Run.withOne(7...8) { Array($0) } == [7...8])
        let entries = ContiguousArray(
            (0..<10).map { IndexEntry(key: UInt64($0 * 2), coordinate: .checked(0, 0), slot: 0) })
        #expect(entries.withRun { $0.lowerBound(of: 7) } == 4)
    }

    @Test func aScratchHoldsWhatItIsGiven() {
        let sum = MutableCursor<UInt64>.withScratch(capacity: 8) { scratch in
            for i in 0..<8 { scratch[i] = UInt64(i) }
            return (0..<8).reduce(0) { $0 + scratch.reading[$1] }
        }
        #expect(sum == 28)
    }

    #if DEBUG
        @Test func aCursorStopsAReadPastTheMemoryItWasLent() async {
            await #expect(processExitsWith: .failure) {
                let words: ContiguousArray<UInt64> = [1, 2, 3]
                // A block of four words where only three were lent.
                _ = words.withCursor { ($0 + 1)[2] }
            }
        }

        @Test func aCursorStopsAWriteBeforeTheMemoryItWasLent() async {
            await #expect(processExitsWith: .failure) {
                var words: ContiguousArray<UInt64> = [1, 2, 3]
                words.withMutableCursor { row in (row + 1)[-2] = 0 }
            }
        }

        @Test func aRunStopsAReadPastItsElements() async {
            await #expect(processExitsWith: .failure) {
                let ranges: [ClosedRange<UInt64>] = [1...2]
                _ = ranges.withRun { $0[1] }
            }
        }
    #endif
}
