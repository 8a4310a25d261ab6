import Crypto
import Foundation
import Testing

@testable import IAPGuard

@Suite("App Store API auth: JWT and key file")
struct AppStoreAuthTests {
    static func tempDirectory() throws -> URL {
        let url = TestScratch.root.appendingPathComponent("iapguard-key-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    @Test func theTokenIsAnES256JWTWithApplesClaims() throws {
        let key = P256.Signing.PrivateKey()
        let signer = AppStoreJWTSigner(
            issuerID: "issuer-1", keyID: "KEY1234567", bundleID: "com.example.coins", privateKey: key, lifetime: 3600)
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let token = try signer.token(now: now)
        let parts = token.split(separator: ".").map(String.init)
        #expect(parts.count == 3)
        let headerData = try #require(Base64URL.decode(parts[0]))
        let claimsData = try #require(Base64URL.decode(parts[1]))
        let signatureData = try #require(Base64URL.decode(parts[2]))
        let header = try #require(try JSONSerialization.jsonObject(with: headerData) as? [String: Any])
        let claims = try #require(try JSONSerialization.jsonObject(with: claimsData) as? [String: Any])
        #expect(header["alg"] as? String == "ES256")
        #expect(header["kid"] as? String == "KEY1234567")
        #expect(header["typ"] as? String == "JWT")
        #expect(claims["iss"] as? String == "issuer-1")
        #expect(claims["aud"] as? String == "appstoreconnect-v1")
        #expect(claims["bid"] as? String == "com.example.coins")
        #expect((claims["iat"] as? NSNumber)?.int64Value == 1_800_000_000)
        // The lifetime is clamped to Apple's 20 minutes.
        #expect((claims["exp"] as? NSNumber)?.int64Value == Int64(1_800_001_200))
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: signatureData)
        #expect(key.publicKey.isValidSignature(signature, for: Data((parts[0] + "." + parts[1]).utf8)))
        #expect(try signer.token(now: now) != token)  // ECDSA: a fresh signature each time
        #expect(!"\(signer)".contains(key.rawRepresentation.base64EncodedString()))
    }

    @Test func aKeyFileReadableByGroupOrOthersIsRefused() throws {
        let directory = try Self.tempDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let key = P256.Signing.PrivateKey()
        let file = directory.appendingPathComponent("AuthKey.p8")
        try Data(key.pemRepresentation.utf8).write(to: file)
        for mode in [0o644, 0o640, 0o604] {
            try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: file.path)
            #expect(throws: AppStoreKeyFile.KeyError.self) { _ = try AppStoreKeyFile.load(.path(file)) }
        }
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file.path)
        #expect(try AppStoreKeyFile.load(.path(file)).rawRepresentation == key.rawRepresentation)
        try FileManager.default.setAttributes([.posixPermissions: 0o400], ofItemAtPath: file.path)
        #expect(try AppStoreKeyFile.load(.path(file)).rawRepresentation == key.rawRepresentation)
    }

    @Test func aCredentialIsReadFromTheSystemdCredentialsDirectory() throws {
        let directory = try Self.tempDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let key = P256.Signing.PrivateKey()
        let file = directory.appendingPathComponent("appstore-key")
        try Data(key.pemRepresentation.utf8).write(to: file)
        try FileManager.default.setAttributes([.posixPermissions: 0o400], ofItemAtPath: file.path)
        let environment = ["CREDENTIALS_DIRECTORY": directory.path]
        #expect(
            try AppStoreKeyFile.load(.credential("appstore-key"), environment: environment).rawRepresentation
                == key.rawRepresentation)
        #expect(throws: AppStoreKeyFile.KeyError.self) {
            _ = try AppStoreKeyFile.load(.credential("appstore-key"), environment: [:])
        }
        #expect(throws: AppStoreKeyFile.KeyError.self) {
            _ = try AppStoreKeyFile.load(.credential("../appstore-key"), environment: environment)
        }
    }

    @Test func errorsNeverQuoteTheKey() throws {
        let directory = try Self.tempDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("broken.p8")
        let secret = "-----BEGIN PRIVATE KEY-----\nTUlJQ0VBU0VDUkVUU0VDUkVU\n-----END PRIVATE KEY-----\n"
        try Data(secret.utf8).write(to: file)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file.path)
        do {
            _ = try AppStoreKeyFile.load(.path(file))
            Issue.record("a broken key loaded")
        } catch {
            #expect(!"\(error)".contains("TUlJQ0VBU0VDUkVU"))
            #expect("\(error)".contains("broken.p8"))
        }
    }
}

@Suite("Resilient HTTP client")
struct ResilientHTTPClientTests {
    @Test func backoffIsExponentialWithJitterAndCapped() {
        let policy = RetryPolicy(maxAttempts: 5, baseDelay: 1, maxDelay: 8)
        #expect(policy.backoff(attempt: 1, unit: 0) == 0.5)
        #expect(policy.backoff(attempt: 1, unit: 1) == 1)
        #expect(policy.backoff(attempt: 3, unit: 1) == 4)
        #expect(policy.backoff(attempt: 3, unit: 0.5) == 3)
        #expect(policy.backoff(attempt: 10, unit: 1) == 8)
    }

    @Test func theRequestRateIsBounded() {
        let limiter = RateLimiter(requestsPerSecond: 4)
        let now = Date()
        let waits = (0..<4).map { _ in limiter.reserve(now: now) }
        #expect(waits == [0, 0.25, 0.5, 0.75])
    }

    @Test func retryAfterAboveTheLimitEndsTheCall() throws {
        let server = try LoopbackHTTPServer { _ in .json(429, "{}", headers: ["Retry-After": "3600"]) }
        defer { server.stop() }
        let sleeps = SleepRecorder()
        let client = ResilientHTTPClient(
            client: URLSessionHTTPClient(), policy: RetryPolicy(maxAttempts: 5, maxRetryAfter: 60), timeout: 5,
            logger: .init(label: "t"), sleep: { sleeps.record($0) })
        #expect(throws: NetworkCallError.self) {
            _ = try client.send({ HTTPRequest(url: server.baseURL) }, classify: ResilientHTTPClient.defaultVerdict)
        }
        #expect(server.requests.count == 1)
        #expect(!sleeps.recorded.contains(3600))
    }

    @Test func aSlowServerTimesOut() throws {
        // The server would answer after 30 s; the call must end at its own deadline (0.3 s, plus the
        // client's grace for cancelling), long before. The bound is loose on purpose: a loaded CI
        // machine delays timers by a second or more, and what this pins is "not waiting for the server".
        let server = try LoopbackHTTPServer { _ in .delayed(30, status: 200, body: Data("{}".utf8)) }
        defer { server.stop() }
        let started = Date()
        #expect(throws: HTTPClientError.self) {
            _ = try URLSessionHTTPClient().send(HTTPRequest(url: server.baseURL), timeout: 0.3)
        }
        #expect(Date().timeIntervalSince(started) < 15)
    }

    /// Apple's API never redirects: a 3xx is the answer, not followed, so the bearer token never reaches the
    /// host a `Location` names; the call fails, saying so.
    @Test func aRedirectIsNotFollowedAndTheTokenStaysWhereItWasSent() throws {
        let elsewhere = try LoopbackHTTPServer { _ in .json(200, "{\"signedTransactions\": [], \"hasMore\": false}") }
        defer { elsewhere.stop() }
        let target = elsewhere.baseURL.absoluteString
        let server = try LoopbackHTTPServer { request in
            .respond(status: 307, headers: ["Location": target + request.path], body: Data())
        }
        defer { server.stop() }
        let request = HTTPRequest(
            url: server.baseURL.appendingPathComponent("inApps/v2/history/1"),
            headers: ["Authorization": "Bearer not-for-elsewhere"])
        let response = try URLSessionHTTPClient().send(request, timeout: 5)
        #expect(response.status == 307)
        #expect(elsewhere.requests.isEmpty, "\(elsewhere.requests.map(\.headers))")
        let error = AppStoreAPIError.parse(response, request: request.description)
        #expect(error.description.contains("a redirect, not followed"), "\(error)")
    }

    /// A TLS handshake that fails (here: the server answers in plain text) says TLS, not just a library
    /// version.
    @Test func aFailedTLSHandshakeSaysSo() throws {
        let server = try LoopbackHTTPServer(banner: Data("HTTP/1.1 400 Bad Request\r\n\r\n".utf8)) { _ in .drop }
        defer { server.stop() }
        var parts = try #require(URLComponents(url: server.baseURL, resolvingAgainstBaseURL: false))
        parts.scheme = "https"
        let url = try #require(parts.url)
        let error = try #require(throws: HTTPClientError.self) {
            _ = try URLSessionHTTPClient().send(HTTPRequest(url: url), timeout: 5)
        }
        #expect("\(error)".contains("TLS"), "\(error)")
    }

    /// Apple's 401 has no body; the error says which settings to check instead of a bare status.
    @Test func anUnauthorizedAnswerNamesTheSettingsToCheck() {
        let response = HTTPResponse(status: 401, headers: [:], body: Data())
        let error = AppStoreAPIError.parse(response, request: "GET /inApps/v2/history/1")
        for setting in ["key_id", "issuer_id", "bundle_id", ".p8", "clock"] {
            #expect(error.description.contains(setting), "\(error)")
        }
        let forbidden = AppStoreAPIError.parse(
            HTTPResponse(status: 403, headers: [:], body: Data()), request: "GET /inApps/v2/history/1")
        #expect(!forbidden.description.contains("key_id"), "\(forbidden)")
    }

    @Test func aTruncatedBodyIsAnError() throws {
        let server = try LoopbackHTTPServer { _ in
            .truncated(status: 200, body: Data(repeating: 65, count: 1000), sent: 10)
        }
        defer { server.stop() }
        #expect(throws: HTTPClientError.self) {
            _ = try URLSessionHTTPClient().send(HTTPRequest(url: server.baseURL), timeout: 5)
        }
    }
}
