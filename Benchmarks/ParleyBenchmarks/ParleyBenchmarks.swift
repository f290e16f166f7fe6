import Foundation

/// Runs the benchmarks of every area (or those named with `--only a,b`) and prints one
/// tab-separated line per figure; `--quick` shortens every run. `serve` runs the benchmark
/// server instead (see `BenchmarkServer`).
@main
struct ParleyBenchmarks {
    /// Every benchmark area, by name.
    static let areas: [(name: String, run: @Sendable (Bool) async throws -> [BenchmarkResult])] = [
        ("audio", runAudioBenchmarks),
        ("realtime", runRealtimeBenchmarks),
        ("network", runNetworkBenchmarks),
        ("agent", runAgentBenchmarks),
        ("session", runSessionBenchmarks),
        ("server", runServerBenchmarks),
        ("embedded", runEmbeddedBenchmarks),
    ]

    static func main() async {
        let arguments = CommandLine.arguments.dropFirst()
        if arguments.first == "serve" { exit(await BenchmarkServer.run(arguments: Array(arguments.dropFirst()))) }
        let quick = arguments.contains("--quick")
        var only: Set<String>?
        if let index = arguments.firstIndex(of: "--only"), arguments.index(after: index) < arguments.endIndex {
            only = Set(arguments[arguments.index(after: index)].split(separator: ",").map(String.init))
        }
        var failed = false
        for area in areas where only?.contains(area.name) ?? true {
            do {
                for result in try await area.run(quick) { print(result.line) }
            } catch {
                FileHandle.standardError.write(Data("benchmark \(area.name) failed: \(error)\n".utf8))
                failed = true
            }
        }
        exit(failed ? 1 : 0)
    }
}
