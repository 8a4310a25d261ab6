import Foundation
import Testing

@testable import IAPGuard

/// One mapping from a run's errors to exit codes, whichever store the run used.
@Suite struct RunExitCodeErrorTests {
    @Test func everyStoreErrorMapsToTheIOErrorCode() {
        let errors: [any Error] = [
            SQLiteError(code: 10, message: "disk I/O error", sql: nil),
            PostgresStoreError(message: "cannot connect to postgres://iapguard@db/iapguard: connection refused"),
            StoreError(message: "the store returned no run id"),
        ]
        for error in errors {
            #expect(RunExitCode(error: error) == .ioError, "\(error)")
        }
    }

    @Test func runErrorsMapToTheirDocumentedCodes() {
        #expect(RunExitCode(error: ConfigError(file: "iapguard.yml", key: "store", message: "bad")) == .badConfig)
        #expect(RunExitCode(error: WindowError(message: "--since must be before --until")) == .usage)
        #expect(RunExitCode(error: RunLock.Held(path: "store.lock", holder: "pid 1")) == .lockHeld)
        #expect(RunExitCode(error: CocoaError(.fileWriteNoPermission)) == .ioError)
        struct Unexpected: Error {}
        #expect(RunExitCode(error: Unexpected()) == .internalError)
    }

    @Test func helpTextListsEveryCodeOnce() {
        for code in RunExitCode.allCases {
            #expect(RunExitCode.helpText.components(separatedBy: "\(code.rawValue) \(code)").count == 2, "\(code)")
        }
    }
}
