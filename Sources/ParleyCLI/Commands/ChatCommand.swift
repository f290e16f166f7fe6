import Foundation
import ParleyCore

/// `parley chat`: a text conversation with an agent in the terminal.
struct ChatCommand: ParleyCommand {
    static let spec = CommandSpec(
        name: "chat",
        abstract: "Chat with an agent in the terminal.",
        discussion: "Replies stream as they are written and tool calls show as they run. Type /reset to start over "
            + "and /exit (or end the input) to leave. In process by default, with the embedded language model or the "
            + "one PARLEY_LLM_URL names; with --url, through a running server over the OpenAI Realtime protocol.",
        options: [
            .option("url", value: "url", help: "A running Parley server, e.g. http://127.0.0.1:8080."),
            .option("agent", value: "id", help: "The server's agent to chat with (with --url; default: the server's own)."),
            .option("instructions", value: "text", help: "The system prompt of an in-process chat."),
        ],
        environment: [
            EnvironmentSpec("PARLEY_SERVER_SECRET", "Credentials for --url (else the secret in ./.parley)."),
            EnvironmentSpec("PARLEY_LLM_URL", "An OpenAI-compatible chat API instead of the embedded model."),
            EnvironmentSpec("PARLEY_LLM_MODEL", "The model name for that API."),
            EnvironmentSpec("PARLEY_LLM_API_KEY", "The API key for that API."),
            EnvironmentSpec("PARLEY_SYSTEM_PROMPT", "The default system prompt."),
        ],
        examples: ["parley chat", "parley chat --url http://127.0.0.1:8080 --agent agent_123"],
        command: ChatCommand.self
    )

    /// A running server to chat through.
    var serverURL: URL?
    /// The server's agent.
    var agentID: String?
    /// The system prompt of an in-process chat.
    var instructions: String?

    init(_ arguments: ParsedArguments) throws(UsageError) {
        serverURL = try arguments.value("url", .serverURL)
        agentID = try arguments.value("agent", .nonEmpty)
        instructions = try arguments.value("instructions", .nonEmpty)
        if agentID != nil, serverURL == nil { throw arguments.usageError("--agent needs --url: agents live on a server") }
        if instructions != nil, serverURL != nil {
            throw arguments.usageError("--instructions is for in-process chats; a server's agent has its own")
        }
    }

    func run(_ context: CommandContext) async throws {
        if let serverURL {
            let server = try ServerConnection.resolve(serverURL, context: context)
            let backend = try await RemoteChat(server: server, agentID: agentID)
            try await ChatLoop(backend: backend, context: context).run()
            return
        }
        let engines = try InProcessEngines(context)
        let (model, stop) = try await context.withProgress("Starting the language model") { try await engines.languageModel() }
        let agent = Agent(
            model: model,
            instructions: instructions ?? engines.settings.systemPrompt,
            tools: ToolRegistry([CalculatorTool(), CurrentTimeTool()]),
            options: AgentOptions(fillerDelay: nil)
        )
        do {
            try await ChatLoop(backend: InProcessChat(agent: agent, description: engines.languageModelDescription), context: context).run()
        } catch {
            await stop()
            throw error
        }
        await stop()
    }
}
