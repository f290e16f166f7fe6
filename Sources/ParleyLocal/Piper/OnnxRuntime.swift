import COnnxRuntime
import Foundation
import ParleyCore
import ParleySync
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// onnxruntime's C library, opened at run time with `dlopen` (so a server without it still
/// starts, on flite) and its C API table (`OrtApi`, version `ORT_API_VERSION` of the header
/// setup installs; newer libraries serve every older version).
///
/// One logging environment per process. `OrtApi` calls are thread-safe where onnxruntime says
/// so: sessions may run concurrently from several threads.
final class OnnxRuntime: @unchecked Sendable {  // Immutable after init; onnxruntime's env and API table are thread-safe.
    /// The C API table.
    let api: OrtApi
    /// The process's onnxruntime environment (logging warnings and errors only).
    let environment: OpaquePointer

    private static let loaded = Locked<[String: OnnxRuntime]>([:])

    /// The library at `path`, opened once per process.
    /// - Throws: `LocalModelError.missingFile` when there is no file, `.unloadable` when it is
    ///   not an onnxruntime library that serves this API version.
    static func load(path: String) throws -> OnnxRuntime {
        if let runtime = loaded.withLock({ $0[path] }) { return runtime }
        let runtime = try OnnxRuntime(path: path)
        return loaded.withLock { cache in
            if let existing = cache[path] { return existing }
            cache[path] = runtime
            return runtime
        }
    }

    private init(path: String) throws {
        guard FileManager.default.isReadableFile(atPath: path) else {
            throw LocalModelError.missingFile(kind: "onnxruntime library", path: path)
        }
        // Never closed: the library stays for the life of the process.
        guard let handle = dlopen(path, RTLD_NOW | RTLD_LOCAL), let symbol = dlsym(handle, "OrtGetApiBase") else {
            throw LocalModelError.unloadable(kind: "onnxruntime library", path: path)
        }
        typealias GetApiBase = @convention(c) () -> UnsafePointer<OrtApiBase>?
        let getApiBase = unsafeBitCast(symbol, to: GetApiBase.self)
        guard let base = getApiBase(), let table = base.pointee.GetApi!(UInt32(ORT_API_VERSION)) else {
            throw LocalModelError.unloadable(kind: "onnxruntime library (C API version \(ORT_API_VERSION))", path: path)
        }
        api = table.pointee
        var environment: OpaquePointer?
        if let status = table.pointee.CreateEnv!(ORT_LOGGING_LEVEL_ERROR, "parley", &environment) {
            let message = Self.message(of: status, api: table.pointee)
            throw ProviderError(.server, provider: "onnxruntime", message: "onnxruntime could not start: \(message)")
        }
        self.environment = environment!
    }

    /// Throws the error `status` carries (and releases it); does nothing for success (`nil`).
    /// - Throws: `ProviderError` with onnxruntime's message.
    func check(_ status: OpaquePointer?, _ doing: @autoclosure () -> String) throws {
        guard let status else { return }
        let message = Self.message(of: status, api: api)
        throw ProviderError(.server, provider: "onnxruntime", message: "\(doing()): \(message)")
    }

    private static func message(of status: OpaquePointer, api: OrtApi) -> String {
        defer { api.ReleaseStatus!(status) }
        return api.GetErrorMessage!(status).map { String(cString: $0) } ?? "unknown error"
    }
}
