#if canImport(SwiftUI)
import ParleyClient
import SwiftUI

/// The command dock: the mic pill in the middle (hold to talk), hands-free on the left, the
/// keyboard on the right (typing opens the same chat).
public struct ParleyDock: View {
    private let model: ConversationModel
    private let onKeyboard: () -> Void

    /// Creates the dock; `onKeyboard` opens the chat for typing.
    public init(model: ConversationModel, onKeyboard: @escaping () -> Void) {
        self.model = model
        self.onKeyboard = onKeyboard
    }

    public var body: some View {
        HStack(spacing: 28) {
            Button {
                model.setHandsFree(!model.isHandsFree)
            } label: {
                Image(systemName: model.isHandsFree ? "waveform.circle.fill" : "waveform.circle")
                    .font(.title2)
            }
            .accessibilityLabel(model.isHandsFree ? "Turn hands-free off" : "Talk hands-free")
            HoldToTalkButton(model: model)
            Button(action: onKeyboard) {
                Image(systemName: "keyboard").font(.title2)
            }
            .accessibilityLabel("Type a message")
        }
        .padding(.horizontal, 24)
        .padding(.vertical, 12)
        .background(.regularMaterial, in: Capsule())
        .padding(.bottom, 8)
    }
}
#endif
