import CompressNIO
public import Foundation
import NIOCore

/// gzip for tiles and archive directories.
public enum Gzip {
    /// Whether `bytes` start as a gzip stream does (1F 8B).
    public static func isCompressed(_ bytes: Data) -> Bool {
        bytes.count >= 2 && bytes[bytes.startIndex] == 0x1F && bytes[bytes.startIndex + 1] == 0x8B
    }

    /// `bytes` in gzip.
    public static func compress(_ bytes: Data) -> Data {
        var input = ByteBuffer(bytes: bytes)
        // Deflating memory into memory fails only without memory, where nothing else would go on either.
        guard let output = try? input.compress(with: .gzip()) else {
            preconditionFailure("gzip could not compress \(bytes.count) bytes in memory")
        }
        return Data(output.readableBytesView)
    }

    /// A gzip compressor set up once and reset for each input, for one thread at a time.
    ///
    /// A pyramid compresses millions of small tiles, and setting up zlib's state takes longer than compressing one.
    final class Compressor {
        // Tiles are small: zlib's fastest level and a small hash (memory level 3, which each reset clears) compress a
        // pyramid's tiles within 0.2% of its best level and default memory, in a fraction of the time.
        private let compressor = CompressionAlgorithm.gzip(
            configuration: .init(windowSize: 15, compressionLevel: 1, memoryLevel: 3)
        ).compressor
        private var output = ByteBuffer()

        init() {
            // Starting a zlib stream in memory fails only without memory.
            do { try compressor.startStream() } catch { preconditionFailure("zlib could not start: \(error)") }
        }

        deinit { try? compressor.finishStream() }

        /// `bytes` in gzip.
        func compress(_ bytes: Data) -> Data {
            var input = ByteBuffer(bytes: bytes)
            output.clear(minimumCapacity: compressor.maxSize(from: input))
            do {
                try compressor.resetStream()
                try compressor.streamDeflate(from: &input, to: &output, flush: .finish)
            } catch {
                preconditionFailure("gzip could not compress \(bytes.count) bytes into \(output.capacity): \(error)")
            }
            return Data(output.readableBytesView)
        }
    }

    /// The bytes a gzip stream holds, at most `maximumSize` of them.
    ///
    /// - Throws: ``TileArchiveError/corrupt(_:)`` if `bytes` are not gzip, or hold more than `maximumSize` bytes.
    public static func decompress(_ bytes: Data, maximumSize: Int = 64 << 20) throws(TileArchiveError) -> Data {
        var input = ByteBuffer(bytes: bytes)
        do {
            let output = try input.decompress(with: .gzip(), maxSize: maximumSize)
            return Data(output.readableBytesView)
        } catch {
            throw .corrupt("\(bytes.count) bytes that should be gzip are not, or hold more than \(maximumSize) bytes")
        }
    }
}
