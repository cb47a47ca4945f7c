import Foundation

extension PMTiles {
    /// A directory's bytes before compression: the count, then each column (tile id deltas, run lengths, lengths,
    /// offsets) as varints; an offset right after the previous entry's bytes is written as 0.
    static func serialize(_ entries: ArraySlice<Entry>) -> Data {
        var data = Data()
        data.appendVarint(UInt64(entries.count))
        var lastID: UInt64 = 0
        for entry in entries {
            data.appendVarint(entry.tileID - lastID)
            lastID = entry.tileID
        }
        for entry in entries { data.appendVarint(UInt64(entry.runLength)) }
        for entry in entries { data.appendVarint(UInt64(entry.length)) }
        var previous: Entry?
        for entry in entries {
            if let previous, entry.offset == previous.offset + UInt64(previous.length) {
                data.appendVarint(0)
            } else {
                data.appendVarint(entry.offset + 1)
            }
            previous = entry
        }
        return data
    }

    /// The entries of a directory's bytes (after decompression).
    static func deserialize(_ bytes: Data, path: String) throws(TileArchiveError) -> [Entry] {
        var reader = ByteReader(bytes)
        func next() throws(TileArchiveError) -> UInt64 {
            guard let value = reader.varint() else { throw .corrupt("\(path): a directory ends before its entries do") }
            return value
        }
        let count = try next()
        // Each entry takes at least four bytes: a count larger than that is damage, not a reason to allocate.
        guard count <= UInt64(bytes.count) else { throw .corrupt("\(path): a directory claims \(count) entries") }
        var entries = [Entry](repeating: Entry(tileID: 0, offset: 0, length: 0, runLength: 0), count: Int(count))
        var lastID: UInt64 = 0
        for i in entries.indices {
            let (id, overflow) = lastID.addingReportingOverflow(try next())
            guard !overflow else { throw .corrupt("\(path): a directory's tile ids overflow") }
            entries[i].tileID = id
            lastID = id
        }
        for i in entries.indices {
            guard let run = UInt32(exactly: try next()) else { throw .corrupt("\(path): a run length overflows") }
            entries[i].runLength = run
        }
        for i in entries.indices {
            guard let length = UInt32(exactly: try next()) else { throw .corrupt("\(path): a length overflows") }
            entries[i].length = length
        }
        for i in entries.indices {
            let value = try next()
            if value == 0 {
                guard i > 0 else { throw .corrupt("\(path): a directory's first offset is missing") }
                let (next, overflow) = entries[i - 1].offset.addingReportingOverflow(UInt64(entries[i - 1].length))
                guard !overflow else { throw .corrupt("\(path): a directory's offsets overflow") }
                entries[i].offset = next
            } else {
                entries[i].offset = value - 1
            }
        }
        return entries
    }

    /// The entry that holds `tileID` in `entries` (sorted by tile id): the last one at or before it, if its run
    /// reaches it, or the leaf directory that covers it.
    static func entry(for tileID: UInt64, in entries: [Entry]) -> Entry? {
        var low = 0
        var high = entries.count
        // The first entry after tileID.
        while low < high {
            let middle = (low + high) / 2
            if entries[middle].tileID <= tileID { low = middle + 1 } else { high = middle }
        }
        guard low > 0 else { return nil }
        let entry = entries[low - 1]
        guard entry.runLength == 0 || tileID - entry.tileID < UInt64(entry.runLength) else { return nil }
        return entry
    }
}
