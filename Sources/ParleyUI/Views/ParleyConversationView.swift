#if canImport(SwiftUI)
import ParleyClient
import SwiftUI

/// A voice-first agent chat over any screen of the app: the dock at the bottom, the listening
/// orb while the person holds to talk, and the full-screen chat that opens with what they
/// said already sent (or from the keyboard button). An empty hold settles back to the dock.
///
/// ```swift
/// ParleyConversationView(model: model) {
///     HomeScreen()
/// }
/// ```
public struct ParleyConversationView<Home: View>: View {
    private let model: ConversationModel
    private let home: Home
    @State private var chatPresented = false
    @State private var chatFocusesComposer = false
    @Environment(\.scenePhase) private var scenePhase

    /// Creates the view over `home`; it connects `model` when it appears.
    public init(model: ConversationModel, @ViewBuilder home: () -> Home) {
        self.model = model
        self.home = home()
    }

    public var body: some View {
        ZStack(alignment: .bottom) {
            home.frame(maxWidth: .infinity, maxHeight: .infinity)
            ParleyDock(model: model) {
                chatFocusesComposer = true
                chatPresented = true
            }
        }
        .overlay { ListeningOrb(model: model) }
        .overlay(alignment: .top) { ConversationErrorBanner(model: model) }
        .onChange(of: model.messages.count) { previous, count in
            // Release-to-send: the first entry of a turn opens the chat.
            if count > previous, !chatPresented {
                chatFocusesComposer = false
                chatPresented = true
            }
        }
        .onChange(of: scenePhase) { _, phase in
            if phase == .active {
                model.reconnectNow()
            } else {
                model.cancelHold()
            }
        }
        .task { model.connect() }
        .modifier(ChatPresentation(isPresented: $chatPresented) {
            ParleyChatView(model: model, focusesComposer: chatFocusesComposer) { chatPresented = false }
        })
    }
}

/// Full screen on iOS, a sheet on macOS.
private struct ChatPresentation<Chat: View>: ViewModifier {
    @Binding var isPresented: Bool
    @ViewBuilder let chat: () -> Chat

    func body(content: Content) -> some View {
        #if os(iOS)
        content.fullScreenCover(isPresented: $isPresented, content: chat)
        #else
        content.sheet(isPresented: $isPresented) {
            chat().frame(minWidth: 420, minHeight: 560)
        }
        #endif
    }
}
#endif
