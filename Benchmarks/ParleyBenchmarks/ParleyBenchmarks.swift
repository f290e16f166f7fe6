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
        ("voice", runVoiceBenchmarks),
        ("languages", runLanguageBenchmarks),
        ("turns", runTurnBenchmarks),
        ("conversation", runConversationBenchmarks),
        ("embedded-capacity", runEmbeddedCapacityBenchmarks),
        ("interruption-plain-client", runPlainClientInterruptionBenchmarks),
        ("store", runStoreBenchmarks),
        ("webrtc", runWebRTCBenchmarks),
        ("recordings", runRecordingBenchmarks),
        ("cluster", runClusterBenchmarks),
        ("cluster-capacity", runClusterCapacityBenchmarks),
        ("telephony", runTelephonyBenchmarks),
        ("sip", runSIPBenchmarks),
    ]

    /// Parts of an area, for rerunning just their figures: run only when named with `--only`.
    static let partialAreas: [(name: String, run: @Sendable (Bool) async throws -> [BenchmarkResult])] = [
        ("turns-over-agent", turnOverAgentBenchmarks),  // the corpus over the agent, part of `turns`
        ("turns-semantic-vad", turnSemanticVADBenchmarks),  // the text judge and semantic_vad's turn endings, part of `turns`
        ("turns-noise-reduction", turnNoiseReductionBenchmarks),  // WER without and with noise_reduction, part of `turns`
        ("server-trial", runServerTrialBenchmarks),  // one `server` defaults trial at PARLEY_BENCH_SESSIONS sessions
        ("turns-base-ear", turnBaseEarBenchmarks),  // `turns` endings and interruptions with Whisper base as the ear (issue 40)
    ]

    static func main() async {
        let arguments = CommandLine.arguments.dropFirst()
        if arguments.first == "serve" { exit(await BenchmarkServer.run(arguments: Array(arguments.dropFirst()))) }
        guard let (quick, only) = parseOptions(Array(arguments)) else {
            FileHandle.standardError.write(Data(usage.utf8))
            exit(2)
        }
        var failed = false
        let selected = only.map { names in (areas + partialAreas).filter { names.contains($0.name) } } ?? areas
        for area in selected {
            do {
                for result in try await area.run(quick) { print(result.line) }
            } catch {
                FileHandle.standardError.write(Data("benchmark \(area.name) failed: \(error)\n".utf8))
                failed = true
            }
        }
        exit(failed ? 1 : 0)
    }

    static let usage = """
        usage: ParleyBenchmarks [--quick] [--only AREA,AREA]
               ParleyBenchmarks serve ...
        areas: \(areas.map(\.name).joined(separator: ", "))
        parts of an area, run only when named: \(partialAreas.map(\.name).joined(separator: ", "))

        """

    /// `--quick` and the areas named by `--only` (`nil`: all); `nil` for anything else.
    static func parseOptions(_ arguments: [String]) -> (quick: Bool, only: Set<String>?)? {
        var quick = false
        var only: Set<String>?
        var remaining = arguments[...]
        while let argument = remaining.popFirst() {
            switch argument {
            case "--quick":
                quick = true
            case "--only":
                guard let list = remaining.popFirst() else { return nil }
                let names = Set(list.split(separator: ",").map(String.init))
                guard !names.isEmpty, names.isSubset(of: (areas + partialAreas).map(\.name)) else { return nil }
                only = names
            default:
                return nil
            }
        }
        return (quick, only)
    }
}
