import Foundation

/// Readable text for file-system errors.
enum FileErrorText {
    /// `no such file`, `permission denied`, … for an error from reading or writing a file.
    static func describe(_ error: any Error) -> String {
        let nsError = error as NSError
        switch (nsError.domain, nsError.code) {
        case (NSCocoaErrorDomain, NSFileReadNoSuchFileError), (NSCocoaErrorDomain, NSFileNoSuchFileError): return "no such file"
        case (NSCocoaErrorDomain, NSFileReadNoPermissionError), (NSCocoaErrorDomain, NSFileWriteNoPermissionError): return "permission denied"
        case (NSCocoaErrorDomain, NSFileWriteOutOfSpaceError): return "the disk is full"
        default: break
        }
        if let posix = (nsError.userInfo[NSUnderlyingErrorKey] as? NSError), posix.domain == NSPOSIXErrorDomain {
            return String(cString: strerror(Int32(posix.code))).lowercased()
        }
        return nsError.localizedDescription
    }
}
