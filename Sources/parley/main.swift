import Foundation
import ParleyCLI

exit(await ParleyCommandLine.run(Array(CommandLine.arguments.dropFirst())))
