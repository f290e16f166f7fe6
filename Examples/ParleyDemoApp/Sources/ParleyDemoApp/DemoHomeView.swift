import ParleyClient
import SwiftUI

/// The screen behind the dock: what to try, and where the conversation stands.
struct DemoHomeView: View {
    let model: ConversationModel

    var body: some View {
        VStack(spacing: 16) {
            Spacer()
            Image(systemName: "bubble.left.and.bubble.right.fill")
                .font(.system(size: 56))
                .foregroundStyle(Color.accentColor)
            Text("Parley")
                .font(.largeTitle.bold())
            Text("Hold the mic and talk. Let go to send.")
                .foregroundStyle(.secondary)
            Text(statusLine)
                .font(.footnote.monospaced())
                .foregroundStyle(.secondary)
            Spacer()
            Spacer()
        }
        .padding()
    }

    private var statusLine: String {
        var words = "\(model.status.rawValue) · \(model.messages.count) messages"
        if model.isHandsFree { words += " · hands-free" }
        return words
    }
}
