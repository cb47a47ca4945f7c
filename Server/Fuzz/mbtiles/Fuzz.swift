import Foundation
import MapClusterFuzzing

/// libFuzzer's entry: one input, run through `FuzzTarget.mbtiles`.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    FuzzTarget.mbtiles.run(Data(bytes: bytes, count: count))
    return 0
}
