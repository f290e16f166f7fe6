#if canImport(SwiftUI)
import ParleyClient
import SwiftUI

/// The mic pill: hold to talk, release to send. It reacts on touch-down (no tap delay, no
/// animated blur on the press path); in hands-free mode a press stops the agent instead.
public struct HoldToTalkButton: View {
    private let model: ConversationModel
    private let compact: Bool
    @GestureState private var isTouching = false
    #if os(iOS)
    @State private var haptics = HoldHaptics()
    #endif

    /// Creates the button; `compact` makes it a round icon for the chat's composer.
    public init(model: ConversationModel, compact: Bool = false) {
        self.model = model
        self.compact = compact
    }

    public var body: some View {
        let holding = model.isHolding
        ZStack {
            Capsule()
                .fill(holding ? Color.accentColor : Color.accentColor.opacity(0.85))
            Image(systemName: model.isHandsFree ? "stop.fill" : "mic.fill")
                .font(compact ? .body.weight(.semibold) : .title2.weight(.semibold))
                .foregroundStyle(.white)
        }
        .frame(width: compact ? 44 : 132, height: compact ? 44 : 56)
        .scaleEffect(holding ? 1.08 : 1)
        .animation(.spring(response: 0.25, dampingFraction: 0.7), value: holding)
        .opacity(model.microphoneAccess == .denied ? 0.5 : 1)
        .contentShape(Capsule())
        .gesture(
            DragGesture(minimumDistance: 0)
                .updating($isTouching) { _, touching, _ in touching = true }
        )
        .onChange(of: isTouching) { _, touching in
            if touching {
                #if os(iOS)
                if !model.isHandsFree { haptics.begin() }
                #endif
                model.beginHold()
            } else {
                #if os(iOS)
                haptics.end()
                #endif
                model.endHold()
            }
        }
        .accessibilityElement()
        .accessibilityLabel(model.isHandsFree ? "Stop the agent" : "Hold to talk")
        .accessibilityAddTraits(.isButton)
    }
}
#endif
