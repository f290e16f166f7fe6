import Foundation
import ParleyCore

/// A turn detection a session asks for: `server_vad` with its silence window, or
/// `semantic_vad` at an eagerness.
public enum TurnDetectionSetting: Hashable, Sendable, CustomStringConvertible {
    case serverVAD(silenceMs: Int)
    case semanticVAD(ServerVADSettings.Eagerness)

    /// The settings the figures compare: `server_vad` 300 ms and `semantic_vad` at each eagerness.
    public static let compared: [TurnDetectionSetting] = [.serverVAD(silenceMs: 300)]
        + ServerVADSettings.Eagerness.allCases.map { .semanticVAD($0) }

    public var description: String {
        switch self {
        case .serverVAD(let silenceMs): "server_vad \(silenceMs) ms"
        case .semanticVAD(let eagerness): "semantic_vad \(eagerness.rawValue)"
        }
    }

    /// The `turn_detection` object, with `create_response` as given.
    func json(createResponse: Bool) -> String {
        switch self {
        case .serverVAD(let silenceMs):
            #"{"type":"server_vad","silence_duration_ms":\#(silenceMs),"create_response":\#(createResponse)}"#
        case .semanticVAD(let eagerness):
            #"{"type":"semantic_vad","eagerness":"\#(eagerness.rawValue)","create_response":\#(createResponse)}"#
        }
    }

    /// The longest silence after which the turn ends whatever is judged.
    var maximumSilenceMs: Int {
        switch self {
        case .serverVAD(let silenceMs): silenceMs
        case .semanticVAD(let eagerness): eagerness.completionCheck.maximumSilenceMs
        }
    }
}
