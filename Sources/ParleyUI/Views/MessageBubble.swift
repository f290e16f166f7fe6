#if canImport(SwiftUI)
import ParleyClient
import SwiftUI

/// One entry of the thread: the person's words on the right, the agent's on the left, a tool
/// the agent used as a quiet line between them.
struct MessageBubble: View {
    let message: ConversationMessage

    var body: some View {
        switch message.role {
        case .tool:
            Label(toolLine, systemImage: message.status == .failed ? "exclamationmark.triangle" : "wrench.and.screwdriver")
                .font(.footnote)
                .foregroundStyle(.secondary)
                .frame(maxWidth: .infinity, alignment: .leading)
        case .user, .agent:
            let fromUser = message.role == .user
            VStack(alignment: fromUser ? .trailing : .leading, spacing: 4) {
                Text(message.text.isEmpty ? "…" : message.text)
                    .italic(message.status == .transcribing)
                    .padding(.horizontal, 14)
                    .padding(.vertical, 10)
                    .background(fromUser ? Color.accentColor : Color.secondary.opacity(0.15), in: RoundedRectangle(cornerRadius: 18))
                    .foregroundStyle(fromUser ? Color.white : Color.primary)
                if let note {
                    Text(note).font(.caption).foregroundStyle(.secondary)
                }
            }
            .frame(maxWidth: .infinity, alignment: fromUser ? .trailing : .leading)
        }
    }

    private var toolLine: String {
        switch message.status {
        case .streaming: "Using \(message.text)…"
        case .failed: "\(message.text) failed"
        default: "Used \(message.text)"
        }
    }

    private var note: String? {
        switch message.status {
        case .interrupted: "Interrupted"
        case .failed: message.role == .user ? "Not sent" : "Could not finish"
        default: nil
        }
    }
}
#endif
