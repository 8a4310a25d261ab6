import Foundation

// iapguard-bench SUBCOMMAND — one subcommand per pipeline stage; each prints its figures.
let arguments = Array(CommandLine.arguments.dropFirst())
switch arguments.first {
case "verify":
    do {
        try VerifyBenchmark.run()
    } catch {
        FileHandle.standardError.write(Data("iapguard-bench verify: \(error)\n".utf8))
        exit(1)
    }
default:
    FileHandle.standardError.write(Data("usage: iapguard-bench verify\n".utf8))
    exit(64)
}
