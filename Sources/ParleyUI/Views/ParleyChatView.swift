#if canImport(SwiftUI)
import ParleyClient
import SwiftUI

/// The full-screen chat: one thread for spoken and typed entries, streaming as they arrive,
/// with a typing bar that shares the thread and the mic for holding to talk mid-conversation.
public struct ParleyChatView: View {
    private let model: ConversationModel
    private let onClose: (() -> Void)?
    private let focusesComposer: Bool
    @State private var draft = ""
    @FocusState private var composerFocused: Bool

    /// Creates the chat.
    /// - Parameters:
    ///   - focusesComposer: put the cursor in the typing bar when the chat appears (opened
    ///     from the keyboard button).
    ///   - onClose: shows a close button that calls it.
    public init(model: ConversationModel, focusesComposer: Bool = false, onClose: (() -> Void)? = nil) {
        self.model = model
        self.focusesComposer = focusesComposer
        self.onClose = onClose
    }

    public var body: some View {
        VStack(spacing: 0) {
            header
            ScrollViewReader { proxy in
                ScrollView {
                    LazyVStack(spacing: 10) {
                        ForEach(model.messages) { message in
                            MessageBubble(message: message).id(message.id)
                        }
                    }
                    .padding()
                }
                .defaultScrollAnchor(.bottom)
                .onChange(of: model.messages.last?.text) {
                    if let last = model.messages.last { proxy.scrollTo(last.id, anchor: .bottom) }
                }
            }
            ConversationErrorBanner(model: model)
            composer
        }
        .overlay { ListeningOrb(model: model) }
        .onAppear { if focusesComposer { composerFocused = true } }
    }

    private var header: some View {
        HStack {
            Text(Self.statusWords(model.status))
                .font(.subheadline.weight(.medium))
                .foregroundStyle(.secondary)
            Spacer()
            if let onClose {
                Button(action: onClose) {
                    Image(systemName: "chevron.down")
                }
                .accessibilityLabel("Close the chat")
            }
        }
        .padding(.horizontal)
        .padding(.vertical, 10)
    }

    private var composer: some View {
        HStack(alignment: .bottom, spacing: 10) {
            TextField("Message", text: $draft, axis: .vertical)
                .lineLimit(1...5)
                .focused($composerFocused)
                .onSubmit(send)
                .padding(.horizontal, 14)
                .padding(.vertical, 10)
                .background(Color.secondary.opacity(0.12), in: RoundedRectangle(cornerRadius: 20))
            if draft.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
                HoldToTalkButton(model: model, compact: true)
            } else {
                Button(action: send) {
                    Image(systemName: "arrow.up.circle.fill").font(.system(size: 36))
                }
                .accessibilityLabel("Send")
            }
        }
        .padding()
    }

    private func send() {
        if model.send(text: draft) { draft = "" }
    }

    /// The status line's words.
    static func statusWords(_ status: ConversationStatus) -> String {
        switch status {
        case .disconnected: "Offline — reconnecting"
        case .connecting: "Connecting…"
        case .ready: "Ready"
        case .listening: "Listening…"
        case .thinking: "Thinking…"
        case .speaking: "Speaking"
        case .failed: "Can't connect"
        }
    }
}
#endif
