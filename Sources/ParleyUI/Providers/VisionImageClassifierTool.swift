#if canImport(SwiftUI)
import CoreGraphics
import CoreML
import Foundation
import ParleyCore
import Vision

/// A tool an agent can call to find out what is in a picture the person shared: Vision's
/// built-in image classifier, or a Core ML classification model of the app's.
///
/// The picture comes from the app (the photo just taken or picked), not from the model.
///
/// ```swift
/// let tool = VisionImageClassifierTool(image: { await photoStore.latestImage })
/// let registry = ToolRegistry([tool])
/// ```
public struct VisionImageClassifierTool: Tool {
    public let name = "classify_image"
    public let description =
        "Says what the picture the person shared shows: the most likely labels with their confidence. "
        + "Use it when the person asks about their photo or picture."
    public let parameters: JSONValue = .object([
        "type": "object",
        "properties": .object([
            "max_labels": .object([
                "type": "integer",
                "description": "How many labels to return, 1 to 10 (default 5)",
            ])
        ]),
        "additionalProperties": false,
    ])

    private let image: @Sendable () async -> CGImage?
    private let modelURL: URL?

    /// Creates the tool.
    /// - Parameters:
    ///   - image: the picture to classify, or `nil` when the person has shared none.
    ///   - modelURL: a compiled Core ML image classifier (`.mlmodelc`); `nil` uses Vision's
    ///     built-in classifier. It is loaded for each call, as calls are rare.
    public init(image: @escaping @Sendable () async -> CGImage?, modelURL: URL? = nil) {
        self.image = image
        self.modelURL = modelURL
    }

    /// Returns a line like `dog 92%, animal 88%, grass 41%`.
    public func call(arguments: JSONValue) async throws -> String {
        let requested = arguments["max_labels"]?.numberValue ?? 5
        let maximum = requested.isFinite ? Int(min(max(requested, 1), 10)) : 5
        guard let picture = await image() else {
            throw ToolError("the person has not shared a picture; ask them to take or choose one")
        }
        let observations = try classify(picture)
        let labels = observations
            .filter { $0.confidence >= 0.05 }
            .prefix(maximum)
            .map { "\($0.identifier.replacingOccurrences(of: "_", with: " ")) \(Int(($0.confidence * 100).rounded()))%" }
        guard !labels.isEmpty else { return "Nothing in the picture could be recognised with confidence." }
        return labels.joined(separator: ", ")
    }

    private func classify(_ picture: CGImage) throws -> [VNClassificationObservation] {
        let request: VNImageBasedRequest
        if let modelURL {
            do {
                let coreML = VNCoreMLRequest(model: try VNCoreMLModel(for: MLModel(contentsOf: modelURL)))
                coreML.imageCropAndScaleOption = .centerCrop
                request = coreML
            } catch {
                throw ToolError("the image model could not be loaded: \(error.localizedDescription)")
            }
        } else {
            request = VNClassifyImageRequest()
        }
        do {
            try VNImageRequestHandler(cgImage: picture, options: [:]).perform([request])
        } catch {
            throw ToolError("the picture could not be analysed: \(error.localizedDescription)")
        }
        let observations = (request.results as? [VNClassificationObservation]) ?? []
        return observations.sorted { $0.confidence > $1.confidence }
    }
}
#endif
