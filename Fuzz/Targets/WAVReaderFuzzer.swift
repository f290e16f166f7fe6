import Foundation
import ParleyCore

/// libFuzzer entry: reads the input as a WAV file. A file that decodes must hold whole frames,
/// no more samples than its bytes can carry, and only finite samples in [-1, 1].
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzWAVReader(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let data = Data(bytes: bytes, count: count)
    guard let wav = try? WAVFile.read(data) else { return 0 }
    fuzzCheck(wav.format.channelCount >= 1 && wav.format.channelCount <= WAVFile.maximumChannelCount, "channel count out of range")
    fuzzCheck(WAVFile.sampleRateRange.contains(wav.format.sampleRate), "sample rate out of range")
    fuzzCheck(wav.samples.count % wav.format.channelCount == 0, "a partial frame was decoded")
    fuzzCheck(wav.samples.count <= count, "more samples than input bytes")
    fuzzCheck(wav.samples.allSatisfy { $0.isFinite && $0 >= -1 && $0 <= 1 }, "a sample outside [-1, 1]")
    return 0
}
