import Foundation
import ParleyCore

/// `parley eval`: calls an agent with simulated callers from scenario files and checks its
/// replies.
struct EvalCommand: ParleyCommand {
    static let spec = CommandSpec(
        name: "eval",
        abstract: "Call an agent with simulated callers from scenario files and check its replies.",
        discussion: "Each scenario is a conversation over the OpenAI Realtime protocol: typed turns, turns spoken by an "
            + "embedded voice or taken from WAV files, key presses, interruptions, and what each reply should show (docs/evals.md). "
            + "In process by default, with the same engines and PARLEY_* settings as 'parley serve'; with --url on a "
            + "running server. The exit code is 0 only when every run passed (or --min-pass-rate was reached).",
        arguments: [ArgumentSpec(name: "scenario", arity: .oneOrMore, help: "A scenario file (JSON).")],
        options: [
            .option("url", value: "url", help: "A running Parley server, e.g. http://127.0.0.1:8080."),
            .option("agent", value: "id", help: "The agent to call instead of the scenarios' own (with --url)."),
            .option("repeat", short: "n", value: "count", help: "Run each scenario this many times and report pass rates (default 1)."),
            .option("min-pass-rate", value: "n", help: "Succeed when at least n % of the runs passed (default 100)."),
            .option("junit", value: "file", help: "Write a JUnit XML report to this file."),
            .option("json", value: "file", help: "Write a JSON report with each turn's transcript and timings."),
            .option("judge-model", value: "name", help: "The model that scores rubrics (default: PARLEY_LLM_MODEL)."),
        ],
        environment: [
            EnvironmentSpec("PARLEY_SERVER_SECRET", "Credentials for --url (else the secret in ./.parley)."),
            EnvironmentSpec("PARLEY_LLM_URL", "The OpenAI-compatible chat API a judge scores with."),
            EnvironmentSpec("PARLEY_TTS", "The caller's voice when a turn names none (piper or flite)."),
        ],
        examples: [
            "parley eval Examples/evals/built-in-tools.json --url http://127.0.0.1:8080",
            "parley eval checkout.json --repeat 5 --junit eval.xml --json eval.json",
        ],
        command: EvalCommand.self
    )

    /// The scenario files, as given.
    var scenarioPaths: [String]
    /// A running server.
    var serverURL: URL?
    /// The agent every scenario calls.
    var agentID: String?
    /// Runs per scenario.
    var repeatCount: Int
    /// The share of runs that must pass, from 0 to 1.
    var minimumPassRate: Double
    /// Where the JUnit XML goes.
    var junitPath: String?
    /// Where the JSON report goes.
    var jsonPath: String?
    /// The judge's model name.
    var judgeModel: String?

    init(_ arguments: ParsedArguments) throws(UsageError) {
        scenarioPaths = arguments.arguments("scenario")
        serverURL = try arguments.value("url", .serverURL)
        agentID = try arguments.value("agent", .nonEmpty)
        repeatCount = try arguments.value("repeat", .integer(in: 1...1000)) ?? 1
        minimumPassRate = (try arguments.value("min-pass-rate", .number(in: 0...100)) ?? 100) / 100
        junitPath = try arguments.value("junit", .nonEmpty)
        jsonPath = try arguments.value("json", .nonEmpty)
        judgeModel = try arguments.value("judge-model", .nonEmpty)
        if agentID != nil, serverURL == nil { throw arguments.usageError("--agent needs --url: agents live on a server") }
    }

    func run(_ context: CommandContext) async throws {
        var files: [ScenarioFile] = []
        for path in scenarioPaths {
            do {
                files.append(try ScenarioDecoder.read(path, relativeTo: context.workingDirectory))
            } catch {
                throw CommandFailure(error.description)
            }
        }
        let scenarios = files.flatMap(\.scenarios)
        let judge = scenarios.contains(where: { $0.judge != nil }) ? try await ConversationJudge.configured(context, modelName: judgeModel) : nil
        let caller = CallerAudio(context: context)
        var inProcess: InProcessEvalServer?
        let server: ServerConnection
        if let serverURL {
            server = try ServerConnection.resolve(serverURL, context: context)
        } else {
            let started = try await InProcessEvalServer.start(context)
            inProcess = started
            server = started.connection
        }
        var results: [ScenarioFileResult] = []
        do {
            for file in files {
                let directory = context.fileURL(file.path).deletingLastPathComponent()
                let runner = ScenarioRunner(server: server, agentID: agentID, caller: caller, judge: judge, directory: directory)
                var runs: [ScenarioRun] = []
                for scenario in file.scenarios {
                    for number in 1...repeatCount {
                        let label = repeatCount == 1 ? "Calling: \(scenario.name)" : "Calling: \(scenario.name) (\(number)/\(repeatCount))"
                        runs.append(try await context.withProgress(label) { try await runner.run(scenario, repeatNumber: number) })
                    }
                }
                results.append(ScenarioFileResult(path: file.path, runs: runs))
            }
        } catch {
            await inProcess?.stop()
            throw error
        }
        await inProcess?.stop()
        try report(results, context)
        let rate = PassRate(results.flatMap(\.runs))
        if rate.fraction + 1e-9 < minimumPassRate { throw CommandFailure.alreadyReported }
    }

    /// Prints the table and writes the files asked for.
    private func report(_ results: [ScenarioFileResult], _ context: CommandContext) throws {
        context.output.write(EvalTable.render(results, style: context.outputStyle))
        if let junitPath { try write(JUnitReport.xml(results), to: junitPath, context) }
        if let jsonPath { try write(JSONReport.json(results).jsonText + "\n", to: jsonPath, context) }
    }

    private func write(_ text: String, to path: String, _ context: CommandContext) throws {
        do {
            try Data(text.utf8).write(to: context.fileURL(path))
        } catch {
            throw CommandFailure("cannot write \(path): \(FileErrorText.describe(error))")
        }
    }
}
