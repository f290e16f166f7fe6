import Foundation

/// The terminal conversation: reads lines, sends them to a `ChatBackend`, streams the replies.
///
/// Replies go to standard output; the prompt, tool activity and errors to standard error. A
/// failed turn is reported and the conversation goes on; with input from a pipe, any failed
/// turn makes the command exit 1 at the end.
struct ChatLoop {
    /// Who answers.
    let backend: any ChatBackend
    /// Where the conversation happens.
    let context: CommandContext

    /// Runs until `/exit` or the end of the input.
    func run() async throws {
        let interactive = context.input.isTerminal
        let style = context.errorStyle
        if interactive {
            context.errorOutput.line(style.dim("Chatting with \(backend.description). /reset starts over, /exit leaves."))
        }
        var failedTurns = 0
        prompt()
        for await line in context.input.lines() {
            let text = line.trimmingCharacters(in: .whitespacesAndNewlines)
            switch text {
            case "":
                break
            case "/exit", "/quit":
                await backend.close()
                return try finish(failedTurns: failedTurns, interactive: interactive)
            case "/reset":
                do {
                    try await backend.reset()
                    context.errorOutput.line(style.dim("Started a new conversation."))
                } catch {
                    failedTurns += 1
                    report(error)
                }
            case "/help":
                context.errorOutput.line("/reset starts a new conversation, /exit leaves (so does the end of the input).")
            case _ where text.hasPrefix("/"):
                context.errorOutput.line("Unknown command \(text); /reset starts over, /exit leaves.")
            default:
                if !(await converse(text)) { failedTurns += 1 }
            }
            prompt()
        }
        await backend.close()
        try finish(failedTurns: failedTurns, interactive: interactive)
    }

    /// Sends one message and shows the reply; returns whether the turn succeeded.
    private func converse(_ text: String) async -> Bool {
        let style = context.errorStyle
        var wroteText = false
        do {
            for try await event in await backend.reply(to: text) {
                switch event {
                case .text(let delta):
                    context.output.write(delta)
                    wroteText = true
                case .toolStarted(let name, let arguments):
                    context.errorOutput.line(style.dim(ToolActivityText.started(name: name, arguments: arguments)))
                case .toolFinished(let name, let output, let isError):
                    context.errorOutput.line(style.dim(ToolActivityText.finished(name: name, output: output, isError: isError)))
                }
            }
            if wroteText { context.output.line() }
            return true
        } catch {
            if wroteText { context.output.line() }
            report(error)
            return false
        }
    }

    private func prompt() {
        guard context.input.isTerminal else { return }
        context.errorOutput.write(context.errorStyle.bold("you› "))
    }

    private func report(_ error: any Error) {
        context.errorOutput.line(context.errorStyle.error("error:") + " " + ParleyCommandLine.describe(error))
    }

    private func finish(failedTurns: Int, interactive: Bool) throws {
        if failedTurns > 0, !interactive { throw CommandFailure.alreadyReported }
    }

}
