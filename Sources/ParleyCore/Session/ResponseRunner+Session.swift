import Foundation

extension ResponseRunner {
    /// The runner of response `responseID` to `history`, with a session's agent settings and
    /// the request's overrides.
    /// - Parameters:
    ///   - sessionTools: the session's own server tools, beside the providers'.
    ///   - approvedCalls: the calls the client approved since the last response, run first;
    ///     `nil` leaves the providers' setting.
    ///   - callerLanguage: the language the caller speaks (ISO-639-1), which the answer is
    ///     asked for in and spoken in; `nil` when unknown.
    ///   - keepInterruptedResult: keeps the result of a call that finished after the response
    ///     was interrupted.
    init(
        responseID: String, history: [ChatMessage], request: ResponseRequest, configuration: VoiceSessionConfiguration,
        providers: VoiceSessionProviders, sessionTools: SessionTools, approvedCalls: [ToolCall]?, outputSampleRate: Int,
        callerLanguage: String?, keepInterruptedResult: @escaping @Sendable (ToolCall, ToolResult) async -> Void
    ) {
        var agentOptions = providers.agentOptions
        agentOptions.temperature = request.temperature ?? configuration.temperature ?? agentOptions.temperature
        switch request.maxOutputTokens {
        case .limited(let tokens)?: agentOptions.maxTokens = tokens
        case .unlimited?: agentOptions.maxTokens = nil
        case nil: agentOptions.maxTokens = configuration.maxResponseTokens ?? agentOptions.maxTokens
        }
        // No request, not even "inf", goes past the server's ceiling.
        if let ceiling = configuration.outputTokenCeiling { agentOptions.maxTokens = min(agentOptions.maxTokens ?? ceiling, ceiling) }
        agentOptions.externalTools = request.clientTools ?? configuration.clientTools
        agentOptions.firstToolChoice = request.toolChoice ?? configuration.toolChoice
        agentOptions.approvalRequiredTools = sessionTools.approvalRequired
        if let approvedCalls { agentOptions.approvedCalls = approvedCalls }
        agentOptions.keepInterruptedResult = keepInterruptedResult
        let agent = Agent(
            model: providers.model,
            instructions: CallerLanguage.instructions(request.instructions ?? configuration.instructions, answeringIn: callerLanguage),
            tools: sessionTools.registry(adding: providers.tools),
            options: agentOptions
        )
        var speech = configuration.speech
        if let voice = request.voice { speech.voice = voice }
        speech.language = callerLanguage
        self.init(
            responseID: responseID,
            agent: agent,
            history: history,
            synthesizer: request.speaks ?? configuration.speaksResponses ? providers.synthesizer : nil,
            speech: speech,
            outputSampleRate: outputSampleRate,
            makeResampler: providers.makeResampler
        )
    }
}
