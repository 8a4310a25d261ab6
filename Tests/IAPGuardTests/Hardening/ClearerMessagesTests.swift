import Foundation
import Testing
import X509

@testable import IAPGuard

/// Messages that were right but left the operator guessing: they now say what is wrong with the input.
@Suite struct ClearerMessagesTests {
    static func folder() throws -> URL {
        let url = TestScratch.root.appendingPathComponent("msg-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    @Test func aJSONLinesFileWithCROnlyLineEndsSaysSo() throws {
        let error = try #require(throws: RecordError.self) {
            _ = try JSONObject.parse(Array("{\"a\":1}\r{\"b\":2}\r".utf8))
        }
        #expect(error.message.hasPrefix("malformed JSON ("))
        #expect(error.message.contains("the line holds a carriage return (CR)"), "\(error.message)")
        let plain = try #require(throws: RecordError.self) { _ = try JSONObject.parse(Array("{\"a\":".utf8)) }
        #expect(!plain.message.contains("carriage return"))
    }

    @Test func aSymbolicLinkLoopOrADanglingLinkIsNamedAsSuch() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let a = folder.appendingPathComponent("a.jsonl")
        let b = folder.appendingPathComponent("b.jsonl")
        try FileManager.default.createSymbolicLink(atPath: a.path, withDestinationPath: b.path)
        try FileManager.default.createSymbolicLink(atPath: b.path, withDestinationPath: a.path)
        #expect(SourceIngestor.missingReason(a).hasPrefix("a symbolic link loop"), "\(SourceIngestor.missingReason(a))")
        let dangling = folder.appendingPathComponent("d.jsonl")
        try FileManager.default.createSymbolicLink(atPath: dangling.path, withDestinationPath: "gone.jsonl")
        #expect(SourceIngestor.missingReason(dangling) == "a symbolic link to gone.jsonl, which does not exist")
        #expect(SourceIngestor.missingReason(folder.appendingPathComponent("x")) == "no such file or folder")
    }

    @Test func aConfigPathThatIsAFolderIsNamedAsSuch() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let error = try #require(throws: ConfigError.self) { _ = try Config.load(from: folder) }
        #expect(error.description == "\(folder.path): is a folder, not a config file")
    }

    @Test func aCertificateErrorDoesNotNameTheLibrarysSourceFile() {
        var message = ""
        do {
            _ = try Certificate(derEncoded: [0x30, 0x05, 0x02])
        } catch {
            message = CertificateChainEvaluator.describe(error)
        }
        #expect(!message.isEmpty && !message.contains(".swift"), "\(message)")
        #expect(message.hasPrefix("ASN.1 "), "\(message)")
    }
}
