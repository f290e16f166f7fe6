#if canImport(SwiftUI)
import ParleyClient
import SwiftUI

/// The listening overlay: a calming scrim, an orb that swells with the voice, "Listening…"
/// and the live caption. Always mounted and shown by opacity, so appearing costs nothing on
/// the press path; it never takes touches, so the hold continues underneath.
public struct ListeningOrb: View {
    private let model: ConversationModel

    /// Creates the overlay for `model`.
    public init(model: ConversationModel) {
        self.model = model
    }

    public var body: some View {
        let visible = model.isListening
        ZStack {
            Rectangle()
                .fill(.ultraThinMaterial)
                .ignoresSafeArea()
            VStack(spacing: 28) {
                Text("Listening…")
                    .font(.headline)
                    .foregroundStyle(.secondary)
                Circle()
                    .fill(RadialGradient(
                        colors: [Color.white.opacity(0.95), Color.accentColor.opacity(0.7), Color.accentColor.opacity(0.2)],
                        center: UnitPoint(x: 0.35, y: 0.3), startRadius: 4, endRadius: 130
                    ))
                    .frame(width: 180, height: 180)
                    .shadow(color: Color.accentColor.opacity(0.45), radius: 30)
                    .scaleEffect(visible ? 1 + CGFloat(model.microphoneLevel) * 0.35 : 0.4)
                    .animation(.easeOut(duration: 0.08), value: model.microphoneLevel)
                Text(model.partialTranscript.isEmpty ? " " : model.partialTranscript)
                    .font(.title3)
                    .multilineTextAlignment(.center)
                    .lineLimit(3)
                    .frame(maxWidth: 420)
            }
            .padding(32)
        }
        .opacity(visible ? 1 : 0)
        .animation(.easeOut(duration: 0.15), value: visible)
        .allowsHitTesting(false)
        .accessibilityHidden(!visible)
    }
}
#endif
