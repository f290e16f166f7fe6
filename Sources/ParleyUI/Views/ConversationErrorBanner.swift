#if canImport(SwiftUI)
import ParleyClient
import SwiftUI
#if os(iOS)
import UIKit
#endif

/// The current problem in words, with a way out: Settings for a denied microphone, a retry
/// for a lost connection.
public struct ConversationErrorBanner: View {
    private let model: ConversationModel
    @Environment(\.openURL) private var openURL

    /// Creates the banner for `model`; it shows nothing while there is no error.
    public init(model: ConversationModel) {
        self.model = model
    }

    public var body: some View {
        if let error = model.error {
            HStack(alignment: .top, spacing: 12) {
                Image(systemName: error.kind == .microphoneDenied ? "mic.slash" : "exclamationmark.circle")
                Text(error.message)
                    .font(.callout)
                    .frame(maxWidth: .infinity, alignment: .leading)
                if error.opensSettings, let settings = Self.settingsURL {
                    Button("Settings") { openURL(settings) }
                } else if error.kind == .connection {
                    Button("Retry") { model.reconnectNow() }
                }
                Button {
                    model.dismissError()
                } label: {
                    Image(systemName: "xmark")
                }
                .accessibilityLabel("Dismiss")
            }
            .padding(12)
            .background(Color.secondary.opacity(0.12), in: RoundedRectangle(cornerRadius: 12))
            .padding(.horizontal)
            .transition(.opacity)
        }
    }

    /// Where the microphone permission is changed.
    static var settingsURL: URL? {
        #if os(iOS)
        URL(string: UIApplication.openSettingsURLString)
        #else
        URL(string: "x-apple.systempreferences:com.apple.preference.security?Privacy_Microphone")
        #endif
    }
}
#endif
