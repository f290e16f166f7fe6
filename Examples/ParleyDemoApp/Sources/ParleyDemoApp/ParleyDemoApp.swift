import Foundation
import ParleyClient
import ParleyUI
import SwiftUI

/// The demo: a home screen with the Parley dock; hold the mic to talk, type from the keyboard
/// button, switch to hands-free with the waveform button.
@main
struct ParleyDemoApp: App {
    @State private var model = ConversationModel(
        server: DemoConfiguration.serverURL,
        token: LocalTokenSource(server: DemoConfiguration.serverURL).fetch,
        audio: AVAudioEngineConversationAudio()
    )

    var body: some Scene {
        WindowGroup {
            ParleyConversationView(model: model) {
                DemoHomeView(model: model)
            }
        }
    }
}

/// Where the demo finds its server.
enum DemoConfiguration {
    /// `PARLEY_URL` from the environment, or the local server's default address.
    static var serverURL: URL {
        if let configured = ProcessInfo.processInfo.environment["PARLEY_URL"], let url = URL(string: configured) {
            return url
        }
        return URL(string: "http://127.0.0.1:8080")!
    }
}
